"""The `tickq legacy import|check` commands: move an old orchestrator's lines into the registry,
and check that the registry still runs what the old lines ran.

Exit statuses: 0 done / parity holds, 1 parity fails, 2 invalid input (a file that cannot be
read, a bad --chain range, a registry that is not TOML).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import tomllib
from pathlib import Path

import psycopg

from tickq import db
from tickq.legacy import importing
from tickq.legacy import parity as legacy_check
from tickq.registry.durations import parse_duration

EXIT_OK, EXIT_NO, EXIT_INVALID, EXIT_DATABASE = 0, 1, 2, 3


class _Unreachable(Exception):
    """--database-url was given and the database did not answer."""


class _Invalid(Exception):
    pass


def _read(path: Path) -> str:
    try:
        return path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        raise _Invalid(f"{path}: file not found") from None
    except UnicodeDecodeError as e:
        raise _Invalid(f"{path}: not UTF-8 text: {e}") from None
    except OSError as e:
        raise _Invalid(f"{path}: cannot read: {e.strerror or e}") from None


def _duration(text: str) -> int:
    try:
        return parse_duration(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _write(path: Path, text: str) -> None:
    """Replace `path` with `text` in one rename, keeping its mode, so a crash leaves either the
    old file or the new one. A symlink stays a symlink: the file it points to is replaced."""
    path = path.resolve()
    mode = path.stat().st_mode & 0o7777 if path.exists() else 0o644
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(text.encode("utf-8"))
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def cmd_import(args: argparse.Namespace) -> int:
    old_path, registry_path = Path(args.file), Path(args.registry)
    old_text = _read(old_path)
    registry_text = _read(registry_path) if registry_path.exists() else ""
    try:
        taken = tomllib.loads(registry_text).get("kinds", {})
    except tomllib.TOMLDecodeError as e:
        raise _Invalid(f"{registry_path}: invalid TOML: {e}") from None
    chains = [importing.Chain(name, int(first), int(last)) for name, first, last in args.chain]
    try:
        plan = importing.plan_import(
            old_text, taken=taken, chains=chains, irreversible=args.irreversible,
            every=args.every, default_timeout=args.timeout,
        )
    except importing.ImportRefused as e:
        raise _Invalid(str(e)) from None
    for line, reason in plan.skipped:
        span = f"{line.first}" if line.first == line.last else f"{line.first}-{line.last}"
        print(f"{old_path}:{span}: left as it is: {reason}", file=sys.stderr)
    if not plan.kinds:
        print(f"{old_path}: no line to move", file=sys.stderr)
        return EXIT_OK
    header = f"# Moved from {old_path.name} by `tickq legacy import`; `legacy` is the old line.\n"
    addition = header + "\n" + plan.registry_text()
    if not args.write:
        sys.stdout.write(addition)
        print(f"# {len(plan.kinds)} kind(s); nothing written (add --write to append them to "
              f"{registry_path} and comment the old lines)", file=sys.stderr)
        return EXIT_OK
    new_registry = registry_text + ("\n" if registry_text and not registry_text.endswith("\n")
                                    else "") + ("\n" if registry_text else "") + addition
    try:
        tomllib.loads(new_registry)
    except tomllib.TOMLDecodeError as e:  # a bug here must not leave a registry tickq refuses
        raise _Invalid(f"the kinds would make {registry_path} invalid TOML: {e}") from None
    # The old file first: if the registry cannot be written, put it back, so that a failure
    # never leaves both the old line and its kind running.
    _write(old_path, importing.apply_import(plan, old_text))
    try:
        _write(registry_path, new_registry)
    except OSError:
        _write(old_path, old_text)
        raise
    for kind in plan.kinds:
        lines = ", ".join(str(line.first) for line, _ in kind.lines)
        print(f"{kind.name}: {old_path}:{lines} -> {registry_path}")
    return EXIT_OK


def cmd_check(args: argparse.Namespace) -> int:
    old_path = Path(args.file)
    old_text = _read(old_path)
    try:
        entries = legacy_check.registry_entries(Path(args.registry))
    except legacy_check.InvalidInput as e:
        raise _Invalid(str(e)) from None
    failures, notes = legacy_check.check(old_text, str(old_path), entries)
    irreversible = sorted(e.target for e in entries.values()
                          if e.irreversible and e.enabled and "/" not in e.target)
    if irreversible and args.database_url:
        failures += _unarmed(args.database_url, irreversible)
    elif irreversible:
        notes.append("arming not checked: give --database-url to fail while an enabled "
                     "irreversible kind has had no first run by hand")
    for note in notes:
        print(f"note: {note}")
    for failure in failures:
        print(f"FAIL {failure}")
    with_legacy = sum(1 for e in entries.values() if e.legacy is not None)
    if failures:
        print(f"legacy check failed: {len(failures)} problem(s)", file=sys.stderr)
        return EXIT_NO
    print(f"legacy parity holds: {with_legacy} kind(s) and step(s) run what their old lines ran")
    return EXIT_OK


def _unarmed(url: str, kinds: list[str]) -> list[str]:
    """The enabled irreversible kinds the queue still holds unarmed (queue_status, which a
    reader role may read): each waits for a person's first run, whatever the files say."""
    try:
        with db.connect(url) as conn:
            rows = conn.execute(db.load_query("unarmed_kinds"), {"kinds": kinds}).fetchall()
    except psycopg.Error as exc:
        raise _Unreachable(str(exc).strip().splitlines()[0] if str(exc).strip() else
                           type(exc).__name__) from None
    return [f"irreversible kind {kind!r} is enabled for its schedule but not armed: a person "
            f"runs it once by hand first (tickq run {kind})" for (kind,) in rows]


def add_commands(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    """`common`'s database and log options mean nothing here: these commands read files only."""
    del common
    files = argparse.ArgumentParser(add_help=False)
    files.add_argument(
        "--registry", default=os.environ.get("TICKQ_REGISTRY", "registry.toml"),
        help="the registry file (default: $TICKQ_REGISTRY or ./registry.toml)",
    )
    text = "move an old orchestrator's lines into the registry, and check parity"
    group = sub.add_parser("legacy", help=text, description=text)
    actions = group.add_subparsers(dest="action", required=True, metavar="ACTION")
    imp = actions.add_parser(
        "import", parents=[files],
        help="print (or --write) the kinds that replace an old script's or crontab's lines",
        description="Print the registry kinds that replace FILE's lines (a shell script of one "
        "command per line, or a crontab). With --write, append them to the registry and comment "
        "the moved lines as `#tickq:KIND# <old line>`: uncommenting a line is the rollback.",
    )
    imp.add_argument("file", metavar="FILE")
    imp.add_argument("--write", action="store_true",
                     help="append the kinds to the registry and comment the moved lines")
    imp.add_argument("--chain", nargs=3, action="append", default=[],
                     metavar=("NAME", "FROM-LINE", "TO-LINE"), type=str,
                     help="make the commands of these lines one chain kind, in order")
    imp.add_argument("--irreversible", type=int, action="append", default=[], metavar="LINE",
                     help="the (usually commented) line of a lane run by hand: an irreversible "
                     "kind, never scheduled until a person runs it once")
    imp.add_argument("--every", type=_duration, default=3600, metavar="DURATION",
                     help="cadence of a script's lines (default 1h); crontab lines keep theirs")
    imp.add_argument("--timeout", type=_duration, default=None, metavar="DURATION",
                     help="timeout of lines without a `timeout` wrapper (default: --every)")
    imp.set_defaults(func=_guarded(cmd_import))
    chk = actions.add_parser(
        "check", parents=[files],
        help="exit 1 unless every kind with a `legacy` line runs that line's command",
        description="Exit 1 unless every registry kind and step with a `legacy` line runs the "
        "same command, every moved line of FILE names an enabled (or irreversible) kind, no "
        "line is both active in FILE and enabled in tickq, no timeout is shorter than the old "
        "watchdog's, and no irreversible kind's old line is active.",
    )
    chk.add_argument("file", metavar="FILE")
    chk.add_argument(
        "--database-url", default=None, metavar="URL",
        help="also fail while an enabled irreversible kind of the queue at URL is not armed "
        "(only when given: the check otherwise reads files only)",
    )
    chk.set_defaults(func=_guarded(cmd_check))


def _guarded(func):
    def run(args: argparse.Namespace) -> int:
        if getattr(args, "chain", None):
            for name, first, last in args.chain:
                if not (first.isdigit() and last.isdigit() and int(first) <= int(last)):
                    print(f"tickq: --chain {name} {first} {last}: FROM-LINE and TO-LINE must be "
                          "line numbers, FROM-LINE <= TO-LINE", file=sys.stderr)
                    return EXIT_INVALID
        try:
            return func(args)
        except _Invalid as e:
            print("\n".join(f"tickq: {line}" for line in str(e).splitlines()), file=sys.stderr)
            return EXIT_INVALID
        except _Unreachable as e:
            print(f"tickq: cannot read the queue's arming: {e}", file=sys.stderr)
            return EXIT_DATABASE
        except OSError as e:
            print(f"tickq: {e.filename or ''}: {e.strerror or e}", file=sys.stderr)
            return EXIT_INVALID

    return run
