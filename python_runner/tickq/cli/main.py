"""The `tickq` command: the parser, and the one place a command's failure becomes its line and
exit status (through tickq.db.errors.exit_of, the one map).

Exit statuses: 0 the command did its work (failing jobs do not change that), 1 the command ran
but the answer is "no" (a manual run found no free slot, `check` found too little capacity),
2 invalid registry or configuration, 3 the database cannot be reached, 128+N stopped by signal N.
"""

from __future__ import annotations

import argparse
import importlib
import os
import signal
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from tickq import __version__
from tickq.cli import options
from tickq.db.errors import (
    EXIT_CONFIG,
    EXIT_NO,
    EXIT_OK,
    DatabaseUnreachable,
    Failure,
    InvalidInput,
    NoAnswer,
    exit_of,
)
from tickq.log import FORMATS, discard_closed_pipe
from tickq.registry.durations import human_duration

if TYPE_CHECKING:
    from tickq.db.api.session import Connection
    from tickq.registry import Registry

# ------------------------------------------------ the shared steps cmd_check and cmd_simulate call


def Fail(status: int, message: str) -> Failure:  # noqa: N802 - an exception's spelling
    """The failure with this exit status (the map in tickq.db.errors gives it back)."""
    return {EXIT_NO: NoAnswer, EXIT_CONFIG: InvalidInput}.get(status, DatabaseUnreachable)(message)


def _registry(args: argparse.Namespace) -> Registry:
    from tickq.cli import common

    return common.registry(args)


def _url(args: argparse.Namespace) -> str:
    from tickq.cli import common

    return common.url(args)


def _server(args: argparse.Namespace) -> str:
    from tickq.db.api import session

    return session.server(args.database_url)


def _connect(url: str) -> Connection:
    from tickq.db.api import session

    return session.connect(url)


def _migrate(conn: Connection) -> None:
    from tickq.db.api import session

    session.migrate(conn)


def _human(seconds: float) -> str:
    return human_duration(seconds, tenths=False)


def _table(header: Sequence[str], rows: Sequence[Sequence[str]], width: int | None = None,
           shrink: Sequence[int] = ()) -> str:
    from tickq.cli.text import table

    return table(header, rows, width=width, shrink=shrink)


def cmd_check(args: argparse.Namespace) -> int:
    """Exit 0 when the slot shares fit the slots less the margin and no kind waits past
    stale_after in the worst case, else 1."""
    from tickq.check import capacity
    from tickq.check import simulate as worst_case
    from tickq.db.api import registry as registry_api

    registry = _registry(args)
    url = _url(args)
    with _connect(url) as conn:
        _migrate(conn)
        registry_api.refuse_bad_values(conn, registry)
        report = capacity.check(conn, registry)
        durations = capacity.observed_durations(conn) if args.durations == "observed" else None
        agents = capacity.live_agents(conn)  # user-built agents take slots too
    print(_table(
        ["kind", "lane", "schedule", "runs/tick", "expected", "from", "slot share"],
        [[k, p, sch, f"{rpt:.4f}", _human(exp.total_seconds()), src, f"{share:.4f}"]
         for k, p, sch, rpt, exp, src, share in report.kinds],
        width=100, shrink=(0, 2),  # kind and schedule are cut to fit 100 columns
    ))
    print()
    print(_table(
        ["lane", "kinds", "runs/tick", "slot share"],
        [[lane, str(n), f"{rpt:.4f}", f"{share:.4f}"] for lane, n, rpt, share, *_ in report.lanes],
    ))
    _lane, _n, runs, share, slots, budget, fits = report.total
    margin = 1 - float(budget) / slots
    verdict = "fits" if fits else "DOES NOT FIT"
    from tickq.host import programs as commands

    unstartable = commands.problems(registry)
    print(f"\ncapacity {verdict}: total slot share {share:.2f} against {budget:.2f} "
          f"({slots} slots less a {margin:.0%} margin);\n{runs:.2f} runs asked per tick")
    if not fits:
        lanes = [row for row in report.lanes if row[0] != "total" and row[3] > 0]
        worst = max(lanes, key=lambda row: row[3])
        print(f"the {worst[0]} lane takes the most ({worst[3]:.2f} slots): slow its cadences, "
              "shorten its timeouts, or add slots", file=sys.stderr)
    for problem in unstartable:
        print(f"tickq: {problem}", file=sys.stderr)
    server = _server(args)
    result = worst_case.worst_case(server, registry, durations, agents)
    held = "timeout" if args.durations == "timeout" else "observed p95, else its timeout"
    print(f"\nworst case, every run taking its {held}:")
    for window in result.windows:
        first, *more = worst_case.describe(window)
        print(f"  simulated {first}")
        for line in more:
            print(f"    {line}")
    print(_table(["kind", "lane", "runs", "longest wait", "starved", "worst wait began"],
                 worst_case.wait_rows(result), width=100, shrink=(0,)))
    stale = registry.settings.stale_after
    if result.starved:
        print(f"\nworst case STARVES {len(result.starved)} kind(s):")
        for line in worst_case.starved_lines(result, stale):
            print(f"  {line}")
    else:
        print(f"\nworst case fits: no kind waits longer than stale_after {_human(stale)}")
    if args.suggest and result.starved:
        from tickq.check import suggest

        print(suggest.render(suggest.suggest(server, registry, durations)))
    return EXIT_OK if fits and not result.starved and not unstartable else EXIT_NO


def cmd_simulate(args: argparse.Namespace) -> int:
    """Exit 1 when any kind waits longer than stale_after in the simulated hours."""
    import time

    from tickq.check import capacity
    from tickq.check import simulate as worst_case
    from tickq.db.api import registry as registry_api

    if args.hours is not None and not 0 < args.hours < 24 * 366:
        raise Fail(EXIT_CONFIG, f"--hours must be a positive number of hours, got {args.hours:g}")
    registry = _registry(args)
    durations = None
    with _connect(_url(args)) as conn:
        _migrate(conn)
        registry_api.refuse_bad_values(conn, registry)
        agents = capacity.live_agents(conn)  # user-built agents take slots too
        if args.durations == "observed":
            durations = capacity.observed_durations(conn)
    server = _server(args)
    started = time.monotonic()
    result = worst_case.replay(server, registry, args.hours, durations, agents)
    elapsed = time.monotonic() - started
    window = result.windows[0]
    print(f"simulated {worst_case.utc(window.starts_at)} to {worst_case.utc(window.ends_at)}"
          + ("" if args.hours else f" (every schedule once: {worst_case.human(window.period)})"))
    print(_table(["kind", "lane", "runs", "longest wait", "starved", "worst wait began"],
                 worst_case.wait_rows(result)))
    lanes = ["urgent", "high", "normal", "low"]
    starving = sorted({k.lane for k in result.starved}, key=lanes.index)
    stale = _human(registry.settings.stale_after)
    verdict = (f"starving lanes: {', '.join(starving)} (waited longer than {stale})"
               if starving else f"no kind waited longer than {stale}")
    print(f"\n{float(window.hours):g} simulated hours with {args.durations} durations in "
          f"{elapsed:.1f}s: {verdict}")
    return EXIT_NO if starving else EXIT_OK


# ---------------------------------------------------------------- argument parsing


def build_parser() -> argparse.ArgumentParser:
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

    options.queue(add)
    options.status(add)
    check = add("check", cmd_check, "exit 1 unless the cadences fit the slots with margin and "
                "no kind waits past stale_after in the worst case")
    check.add_argument("--suggest", action="store_true",
                       help="when the worst case starves, propose the smallest change that passes")
    sim = add("simulate", cmd_simulate, "run the registry with a moved clock; exit 1 on starvation")
    sim.add_argument("--hours", type=float, default=None,
                     help="simulated hours (default: every schedule once, plus stale_after)")
    for p in (check, sim):
        p.add_argument(
            "--durations", choices=("timeout", "observed"), default="timeout",
            help="each run holds its slot for its timeout (worst case, default) or the queue's p95",
        )
    options.operator(add)
    options.page(add)
    options.legacy(sub)
    options.agent(sub, common)
    options.machine(add, sub, common)
    return parser


def _command(func: options.Command) -> options.Command:
    """The command's function, its module imported now when the parser named it."""
    if callable(func):
        return func
    module, _, name = func.partition(":")
    return getattr(importlib.import_module(f"tickq.cli.{module}"), name)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    # `tickq psql -c 'select 1'`: options tickq does not know go on to psql.
    args, extra = parser.parse_known_args(argv)
    if args.command == "psql":
        args.psql_args = [a for a in [*extra, *args.psql_args] if a != "--"]
    elif extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    args.parser = parser  # `tickq completion` writes its script from it
    try:
        status = _command(args.func)(args)
        sys.stdout.flush()  # here, so a closed pipe is caught below and not at exit
        return status
    except BrokenPipeError:
        # The reader went away (`tickq status | head -1`): end quietly, as SIGPIPE would.
        discard_closed_pipe(sys.stdout)
        return 128 + signal.SIGPIPE
    except KeyboardInterrupt:
        return 128 + signal.SIGINT
    except Exception as exc:
        ended = exit_of(exc)
        if ended is None:
            raise
        status, lines = ended
        for line in lines:
            print(f"tickq: {line}", file=sys.stderr)
        return status


if __name__ == "__main__":
    sys.exit(main())
