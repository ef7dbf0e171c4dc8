"""The `tickq` command. Wires the pieces together; exit statuses live here and nowhere else.

Exit statuses: 0 the command did its work (failing jobs do not change that), 1 the command ran
but the answer is "no" (a manual run found no free slot, `check` found too little capacity),
2 invalid registry or configuration, 3 the database cannot be reached, 128+N stopped by signal N.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import psycopg

from tickq import __version__, db
from tickq.check.simulate import ScratchUnavailable
from tickq.db.errors import ClaimRefused, DatabaseUnavailable, RegistryRefused
from tickq.dispatch.tick import UNKNOWN_KIND, Dispatcher
from tickq.host.process import StopEvent
from tickq.log import FORMATS, EventLog, discard_closed_pipe
from tickq.registry import Registry, RegistryError, load_registry

EXIT_OK, EXIT_NO, EXIT_CONFIG, EXIT_DATABASE = 0, 1, 2, 3
RUN_EXITS = """\
The command's output streams to stdout as it comes; tickq's log and the outcome line
("tickq: run 12 of KIND: failed, exit 3, 0.4s") go to stderr. Exit statuses:
  0        the run ended ok
  1        it did not: failed, timed out, could not start, or was not claimed
           (unknown kind, already running, no free slot)
  2        invalid registry or configuration
  3        the database cannot be reached
  128+N    stopped by signal N (the command got the same signal)"""
REPO_EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


class Fail(Exception):
    """A one-line cause and the exit status that goes with it (no traceback)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


# ---------------------------------------------------------------- shared steps


def _registry(args: argparse.Namespace) -> Registry:
    try:
        registry = load_registry(args.registry)
    except RegistryError as exc:
        for problem in exc.problems:
            print(f"tickq: {problem}", file=sys.stderr)
        raise Fail(EXIT_CONFIG, f"invalid registry: {len(exc.problems)} problem(s)") from None
    if not registry.kinds and registry.agents is None and not getattr(args, "allow_empty", False):
        # Syncing it would retire every kind of the queue: a truncated or wrong file, mostly. A
        # registry that only sets the bounds of user-built agents means to have no kinds.
        raise Fail(EXIT_CONFIG, f"{registry.path}: no kinds; syncing it would retire every kind "
                                "(pass --allow-empty to mean that)")
    return registry


def _url(args: argparse.Namespace) -> str:
    try:
        return db.resolve_url(args.database_url)
    except Exception as exc:  # the embedded server failed to start
        raise Fail(EXIT_DATABASE, f"cannot start the embedded PostgreSQL: {exc}") from None


def _server(args: argparse.Namespace) -> str:
    """A server to create scratch databases on: --database-url's, else the embedded one."""
    server = args.database_url or os.environ.get("DATABASE_URL")
    if not server:
        from tickq.db import embedded

        try:
            server = embedded.ensure_server()
        except Exception as exc:
            raise Fail(EXIT_DATABASE, f"cannot start the embedded PostgreSQL: {exc}") from None
    _connect(server).close()
    return server


def _connect(url: str, timeouts: db.Timeouts = db.DEFAULT_TIMEOUTS) -> psycopg.Connection:
    try:
        return db.connect(url, timeouts=timeouts)
    except psycopg.ProgrammingError:
        # The parser's message quotes the string, which may hold a password: not repeated.
        raise Fail(EXIT_CONFIG, "invalid --database-url / DATABASE_URL: not a PostgreSQL URL "
                   "(postgresql://user@host:port/dbname) or key=value string") from None
    except psycopg.OperationalError as exc:
        cause = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise Fail(EXIT_DATABASE, f"cannot reach the database: {cause}") from None


def _dispatcher(
    args: argparse.Namespace, registry: Registry, log_stream: Any = None, **kw: Any
) -> Dispatcher:
    url = _url(args)
    _connect(url, db.timeouts_of(registry.settings)).close()
    dispatcher = Dispatcher(url, registry, EventLog(args.log_format, log_stream), **kw)
    try:
        dispatcher.migrate()
    except db.MigrationError as exc:
        raise Fail(EXIT_DATABASE, f"migration failed: {exc}") from None
    return dispatcher


def _on_signals(stop: StopEvent) -> dict[str, int]:
    """SIGTERM/SIGINT stop claiming and pass the same signal to running commands."""
    got: dict[str, int] = {}

    def handler(signum: int, _frame: Any) -> None:
        got["signal"] = signum
        stop.stop(signum)

    signal.signal(signal.SIGTERM, handler)
    signal.signal(signal.SIGINT, handler)
    return got


# ---------------------------------------------------------------- commands


def cmd_tick(args: argparse.Namespace) -> int:
    registry = _registry(args)
    stop = StopEvent()
    got = _on_signals(stop)
    dispatcher = _dispatcher(args, registry, stop_event=stop)
    try:
        summary = dispatcher.tick()
    except DatabaseUnavailable as exc:
        raise Fail(EXIT_DATABASE, f"lost the database: {exc}") from None
    finally:
        dispatcher.close()
    dispatcher.log.event(
        "tick.done", claimed=summary.claimed, outcomes=dict(summary.outcomes),
        drift=summary.drift, stale=summary.stale, unreported=summary.unreported,
        orphans_stopped=summary.orphans, late_reports=summary.late_reports,
        interrupted=summary.interrupted,
    )
    if registry.settings.report_html:
        _write_page(dispatcher, registry.settings.report_html)
    return 128 + got["signal"] if "signal" in got else EXIT_OK


def _write_page(dispatcher: Dispatcher, path: Path) -> None:
    """The registry's report_html, after the tick: a page that cannot be written is a warning,
    never a failed tick."""
    from tickq.page import render as report

    try:
        with db.connect(dispatcher.url) as conn:
            report.write_html(conn, path)
    except (OSError, psycopg.Error) as exc:
        dispatcher.log.warning("report.unwritten", path=str(path), error=str(exc).strip())
    else:
        dispatcher.log.event("report.written", path=str(path))


def cmd_run(args: argparse.Namespace) -> int:
    """Run one kind now; its output streams to stdout as it comes, tickq's own lines go to
    stderr. Exit 0 only when the run ended ok (see RUN_EXITS)."""
    from tickq.cli import arming

    registry = _registry(args)
    stop = StopEvent()
    got = _on_signals(stop)
    dispatcher = _dispatcher(args, registry, stop_event=stop, log_stream=sys.stderr)
    out = sys.stdout.buffer

    def stream(chunk: bytes) -> None:
        try:
            out.write(chunk)
            out.flush()
        except BrokenPipeError:
            # `tickq run KIND | head`: the run goes on, its exit status stays the run's.
            discard_closed_pipe(sys.stdout)
            raise  # stops the streaming

    confirmed: list[str] = []

    def confirm(refusal: str) -> str:
        confirmed.append(arming.confirm_first_run(args.kind, refusal, args.yes_i_ran_this_by_hand))
        return confirmed[0]

    try:
        claim, result = dispatcher.run_now(args.kind, on_output=stream, confirm=confirm)
    except arming.NotConfirmed as exc:
        print(f"tickq: {exc}", file=sys.stderr)
        return EXIT_NO
    except ClaimRefused as exc:
        hint = ""
        if exc.sqlstate == UNKNOWN_KIND:
            from tickq.cli.operator import did_you_mean

            with _connect(dispatcher.url) as conn:
                hint = did_you_mean(conn, args.kind)
        print(f"tickq: {exc}{hint}", file=sys.stderr)
        return EXIT_NO
    finally:
        dispatcher.close()
    if result.pid is None and result.output_tail:  # never started: the tail is tickq's note
        sys.stderr.write(result.output_tail)
    exit_code = "" if result.exit_code is None else f", exit {result.exit_code}"
    print(f"tickq: run {claim.run_id} of {claim.kind}: {result.outcome}{exit_code}, "
          f"{result.duration:.1f}s", file=sys.stderr)
    if confirmed:
        print(f"tickq: {args.kind}: first run by {confirmed[0]} ended {result.outcome}: "
              + ("armed for its schedule" if result.outcome == "ok" else "still unarmed"),
              file=sys.stderr)
    if "signal" in got:
        return 128 + got["signal"]
    return EXIT_OK if result.outcome == "ok" else EXIT_NO


def cmd_sync(args: argparse.Namespace) -> int:
    registry = _registry(args)
    dispatcher = _dispatcher(args, registry)
    try:
        drift = dispatcher.sync()
    finally:
        dispatcher.close()
    from tickq.host import programs as commands

    for problem in commands.problems(registry):
        dispatcher.log.warning("command.cannot_start", problem=problem)
    if not drift:
        print("no drift: the queue matches the registry")
    return EXIT_OK


def cmd_migrate(args: argparse.Namespace) -> int:
    url = _url(args)
    with _connect(url) as conn:
        try:
            applied = db.migrate(conn)
        except db.MigrationError as exc:
            raise Fail(EXIT_DATABASE, f"migration failed: {exc}") from None
    print("\n".join(applied) if applied else "up to date")
    return EXIT_OK


def _open_db(args: argparse.Namespace) -> psycopg.Connection:
    """A connection to the configured database, migrated (or a one-line failure)."""
    conn = _connect(_url(args))
    try:
        _migrate(conn)
    except BaseException:
        conn.close()
        raise
    return conn


def _migrate(conn: psycopg.Connection) -> None:
    try:
        db.migrate(conn)
    except db.MigrationError as exc:
        raise Fail(EXIT_DATABASE, f"migration failed: {exc}") from None


def cmd_status(args: argparse.Namespace) -> int:
    from tickq.cli import status as status_cli

    return status_cli.cmd_status(args, _open_db)


def cmd_psql(args: argparse.Namespace) -> int:
    url = _url(args)
    from tickq.db import embedded

    psql = shutil.which("psql") or str(embedded.bin_dir() / "psql")
    os.execvp(psql, [psql, url, *args.psql_args])
    return EXIT_OK  # not reached


def cmd_demo(args: argparse.Namespace) -> int:
    """A real tick on the embedded PostgreSQL (or --database-url) in a fresh database."""
    args.registry = str(REPO_EXAMPLES / "demo" / "registry.toml")
    if not Path(args.registry).exists():
        raise Fail(EXIT_CONFIG, f"tickq demo runs from a checkout of the repo: no {args.registry}")
    registry = _registry(args)
    server = _server(args)
    db.drop_database(server, "tickq_demo")
    args.database_url = db.create_database(server, "tickq_demo")
    print(f"# tickq demo: registry {registry.path}, database tickq_demo")
    status = cmd_tick(args)
    print()
    cmd_status(argparse.Namespace(**{**vars(args), "json": False, "check": False, "wide": False,
                                     "watch": None}))
    return status


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

    def add(name: str, func: Callable[[argparse.Namespace], int], text: str):
        p = sub.add_parser(name, parents=[common], help=text, description=text)
        p.set_defaults(func=func)
        return p

    add("tick", cmd_tick, "sync the registry, run what is due, report, and exit")
    from tickq.cli import status as status_cli

    status_cli.add_arguments(add("status", cmd_status, "the queue, with stale-due warnings on top"))
    run = add("run", cmd_run, "run one kind now (counted against the slots)")
    run.add_argument("kind")
    run.epilog = RUN_EXITS
    run.formatter_class = argparse.RawDescriptionHelpFormatter
    run.add_argument("--yes-i-ran-this-by-hand", action="store_true",
                     help="confirm the first run of an irreversible kind without a terminal")
    add("sync", cmd_sync, "sync the registry into the queue and show the drift")
    add("migrate", cmd_migrate, "apply the schema to the database")
    add("psql", cmd_psql, "open psql on the configured database").add_argument(
        "psql_args", nargs=argparse.REMAINDER
    )
    add("demo", cmd_demo, "a real tick of the example registry in a fresh demo database")
    from tickq.cli import check as check_cli

    check_cli.add_commands(sub, common)
    from tickq.cli import agents as agents_cli
    from tickq.cli import completion, legacy, roles, timers
    from tickq.cli import operator as operator_cli
    from tickq.cli import page as report_cli
    from tickq.cli import server as server_cli

    server_cli.add_command(sub, common)

    timers.add_commands(sub, common)
    roles.add_commands(sub)
    legacy.add_commands(sub, common)
    agents_cli.add_commands(sub, common)
    report_cli.add_commands(sub, common, _open_db)
    operator_cli.add_commands(sub, common, _open_db)
    completion.add_command(sub, common, parser)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    # `tickq psql -c 'select 1'`: options tickq does not know go on to psql.
    args, extra = parser.parse_known_args(argv)
    if args.command == "psql":
        args.psql_args = [a for a in [*extra, *args.psql_args] if a != "--"]
    elif extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    try:
        status = args.func(args)
        sys.stdout.flush()  # here, so a closed pipe is caught below and not at exit
        return status
    except BrokenPipeError:
        # The reader went away (`tickq status | head -1`): end quietly, as SIGPIPE would.
        discard_closed_pipe(sys.stdout)
        return 128 + signal.SIGPIPE
    except Fail as exc:
        print(f"tickq: {exc}", file=sys.stderr)
        return exc.status
    except RegistryRefused as exc:
        for problem in exc.problems:
            print(f"tickq: {problem}", file=sys.stderr)
        print(f"tickq: invalid registry: {len(exc.problems)} problem(s)", file=sys.stderr)
        return EXIT_CONFIG
    except DatabaseUnavailable as exc:  # commands other than tick, which says so itself
        print(f"tickq: lost the database: {exc}", file=sys.stderr)
        return EXIT_DATABASE
    except ScratchUnavailable as exc:
        print(f"tickq: cannot create a scratch database for the simulation: {exc}",
              file=sys.stderr)
        return EXIT_DATABASE
    except psycopg.Error as exc:  # e.g. a read-only database: one line, not a traceback
        cause = (exc.diag.message_primary or str(exc).strip() or type(exc).__name__).splitlines()[0]
        print(f"tickq: the database refused: {cause} (SQLSTATE {exc.sqlstate})", file=sys.stderr)
        return EXIT_DATABASE
    except PermissionError as exc:  # a folder or file tickq needs and may not use
        print(f"tickq: {exc.strerror}: {exc.filename}", file=sys.stderr)
        return EXIT_CONFIG
    except KeyboardInterrupt:
        return 128 + signal.SIGINT


if __name__ == "__main__":
    sys.exit(main())
