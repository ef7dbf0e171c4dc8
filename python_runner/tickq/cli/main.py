"""The `tickq` command: the parser, and the one place a command's failure becomes its line and
exit status (through tickq.db.errors.exit_of, the one map).

Exit statuses: 0 the command did its work (failing jobs do not change that), 1 the command ran
but the answer is "no" (a manual run found no free slot, `check` found too little capacity),
2 invalid registry or configuration, 3 the database cannot be reached, 128+N stopped by signal N.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import importlib
import os
import signal
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from tickq import __version__
from tickq.log import FORMATS, discard_closed_pipe

# The variables that may hold the database password: kept from what the commands a tickq
# process runs could read of it through /proc (tickq.host.private).
SECRET_VARIABLES = ("DATABASE_URL", "PGPASSWORD")

if TYPE_CHECKING:
    from tickq.cli import options


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser. Given the command line, only the commands of the group of the command it
    names (options.GROUPS: a tick builds no page's or agent's arguments); the whole tree for
    --help, completion, an unknown word or none."""
    from tickq.cli import options  # noqa: F811 - here, so --version needs no parser

    wanted = _wanted(argv, options.GROUPS)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--registry", default=os.environ.get("TICKQ_REGISTRY", "registry.toml"),
        help="the registry file (default: $TICKQ_REGISTRY or ./registry.toml)",
    )
    common.add_argument(
        "--database-url", default=os.environ.get("DATABASE_URL"),
        help="PostgreSQL URL (default: $DATABASE_URL, else the embedded PostgreSQL)",
    )
    common.add_argument(
        "--allow-empty", action="store_true",
        help="accept a registry with no kinds (its sync retires every kind of the queue)",
    )
    common.add_argument(
        "--log-format", choices=FORMATS, default=os.environ.get("TICKQ_LOG_FORMAT", "text"),
        help="one line per event: text (default) or json",
    )
    parser = argparse.ArgumentParser(
        prog="tickq", description="A recurring-job scheduler in PostgreSQL, woken by an OS timer."
    )
    parser.add_argument("--version", action="version", version=f"tickq {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def add(name: str, func: options.Command, text: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, parents=[common], help=text, description=text)
        p.set_defaults(func=func)
        return p

    for group in dict.fromkeys(options.GROUPS.values()):  # each once, in the order of --help
        if wanted is None or options.GROUPS[wanted] == group:
            options.build(group, add, sub, common)
    return parser


def _wanted(argv: Sequence[str] | None, groups: dict[str, str]) -> str | None:
    """The command `argv` names when the parser of that command alone will do."""
    words = list(sys.argv[1:] if argv is None else argv)
    if not words or words[0] not in groups or words[0] == "completion":
        return None  # --help, a typo, or completion (which writes the whole tree)
    return words[0]


def subcommands(parser: argparse.ArgumentParser) -> list[str]:
    """The commands `parser` knows."""
    return [name for action in parser._subparsers._group_actions  # type: ignore[union-attr]
            for name in action.choices]


def _command(func: options.Command) -> options.Command:
    """The command's function, its module imported now when the parser named it."""
    if callable(func):
        return func
    module, _, name = func.partition(":")
    return getattr(importlib.import_module(f"tickq.cli.{module}"), name)


def _unrecognized(parser: argparse.ArgumentParser, args: argparse.Namespace,
                  extra: list[str]) -> None:
    """Exit 2 with the usage of the command that was given (`tickq agent edit`, not `tickq`)
    and, for an option it does not know, the nearest one it does."""
    while True:  # down to the parser of the command named
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        chosen = getattr(args, subs[0].dest, None) if subs else None
        if chosen not in (subs[0].choices if subs else {}):
            break
        parser = subs[0].choices[chosen]
    import difflib  # only for a mistyped option: not on every command's path

    known = [o for a in parser._actions for o in a.option_strings if o.startswith("--")]
    hints = []
    for word in extra:
        close = difflib.get_close_matches(word.partition("=")[0], known, n=1, cutoff=0.6)
        if word.startswith("--") and close:
            hints.append(f"{word.partition('=')[0]}: did you mean {close[0]}?")
    parser.error(f"unrecognized arguments: {' '.join(extra)}"
                 + (f" ({'; '.join(hints)})" if hints else ""))


def _typed_passwords(argv: Sequence[str]) -> list[str]:
    """The password of each --database-url URL typed on the command line (to hide from
    /proc/PID/cmdline: tickq.host.private)."""
    words = list(argv)
    urls = [w.partition("=")[2] for w in words if w.startswith("--database-url=")]
    urls += [nxt for word, nxt in zip(words, words[1:], strict=False) if word == "--database-url"]
    if not urls:
        return []
    from tickq.db.connect import split_password

    passwords = []
    for url in urls:
        with contextlib.suppress(ValueError):
            passwords.append(split_password(url)[1])
    return [p for p in passwords if p]


def main(argv: Sequence[str] | None = None) -> int:
    if list(sys.argv[1:] if argv is None else argv) == ["--version"]:
        print(f"tickq {__version__}")  # what the parser would print, without building it
        return 0
    # A tickq process is short, and most of what it ever holds it allocates while it starts
    # (psycopg, the command's modules): the cyclic collector's passes over those objects, which
    # are never garbage, were about 12 ms of an idle tick (bench/README.md). It is off until the
    # command is imported; then what is alive is frozen (never traversed again) and it collects
    # what the command makes.
    gc.disable()
    try:
        return _main(argv)
    finally:
        gc.enable()


def _main(argv: Sequence[str] | None) -> int:
    from tickq.host.private import keep_private  # here, so --version imports nothing more

    keep_private(SECRET_VARIABLES, _typed_passwords(sys.argv[1:] if argv is None else argv))
    parser = build_parser(argv)
    # `tickq psql -c 'select 1'`: options tickq does not know go on to psql.
    args, extra = parser.parse_known_args(argv)
    if args.command == "psql":
        args.psql_args = [a for a in [*extra, *args.psql_args] if a != "--"]
    elif extra:
        _unrecognized(parser, args, extra)
    args.parser = parser  # `tickq completion` writes its script from it
    try:
        command = _command(args.func)
        gc.freeze()
        gc.enable()
        status = command(args)
        sys.stdout.flush()  # here, so a closed pipe is caught below and not at exit
        return status
    except BrokenPipeError:
        # The reader went away (`tickq status | head -1`): end quietly, as SIGPIPE would.
        discard_closed_pipe(sys.stdout)
        return 128 + signal.SIGPIPE
    except KeyboardInterrupt:
        return 128 + signal.SIGINT
    except Exception as exc:
        from tickq.db.errors import exit_of

        ended = exit_of(exc)
        if ended is None:
            raise
        status, lines = ended
        for line in lines:
            print(f"tickq: {line}", file=sys.stderr)
        return status


if __name__ == "__main__":
    sys.exit(main())
