"""`tickq tick|run|sync|migrate|psql|demo`: the queue's own commands.

`run` exits 0 only when the run ended ok, 1 when it did not or was not claimed (its --help
epilog, cli/options/queue.py, says so); every failure's status is the map's (tickq.db.errors).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from pathlib import Path

from tickq import db
from tickq.cli import common
from tickq.db.api import session
from tickq.db.errors import EXIT_NO, EXIT_OK, UNKNOWN_KIND, ClaimRefused, exit_of
from tickq.dispatch.pings import Pinger, tail_body
from tickq.dispatch.tick import Dispatcher
from tickq.host.stops import StopEvent
from tickq.log import EventLog, discard_closed_pipe
from tickq.registry import Registry

# Shipped with the package (python_runner/tickq/demo links to the repo's examples/demo).
DEMO_REGISTRY = Path(__file__).parents[1] / "demo" / "registry.toml"


def dispatcher(
    args: argparse.Namespace, registry: Registry, log: EventLog, stop: StopEvent | None = None,
    pinger: Pinger | None = None, *, sync: bool = True,
) -> Dispatcher:
    """A dispatcher on the configured queue, migrated, its registry's values judged by the
    database (Dispatcher.migrate): by its sync, which a tick or a run makes first anyway,
    unless `sync` is false (then by a verdict that writes nothing)."""
    found = Dispatcher(common.url(args), registry, log, stop_event=stop,
                       replace_queue=getattr(args, "replace_queue", False), pinger=pinger)
    try:
        found.migrate(sync=sync)
    except BaseException:
        found.close()
        raise
    return found


def cmd_tick(args: argparse.Namespace) -> int:
    """One tick, checked in at the registry's ping_url: `/start`, then the URL itself when the
    tick exits 0, `/fail` (with the reason as the body) when it does not."""
    registry = common.registry(args)
    log = EventLog(args.log_format)
    pinger = Pinger(log, registry.settings.ping_timeout)
    url = registry.settings.ping_url
    pinger.send(url, "/start", what="tick")
    try:
        status = _tick(args, registry, log, pinger)
    except BaseException as exc:
        ended = exit_of(exc) if isinstance(exc, Exception) else None
        why = ended[1][-1] if ended else type(exc).__name__
        pinger.send(url, "/fail", tail_body(f"tickq tick: {why}\n"), what="tick")
        raise
    else:
        pinger.send(url, "" if status == EXIT_OK else "/fail",
                    tail_body(f"tickq tick: exit {status}\n"), what="tick")
        return status
    finally:
        pinger.close()


def _tick(args: argparse.Namespace, registry: Registry, log: EventLog, pinger: Pinger) -> int:
    stop = StopEvent()
    got = common.on_signals(stop)
    queue = dispatcher(args, registry, log, stop, pinger)
    try:
        summary = queue.tick()
    finally:
        queue.close()
    log.event(
        "tick.done", claimed=summary.claimed, outcomes=dict(summary.outcomes),
        drift=summary.drift, stale=summary.stale, unreported=summary.unreported,
        orphans_stopped=summary.orphans, late_reports=summary.late_reports,
        interrupted=summary.interrupted,
    )
    if registry.settings.report_html:
        _write_page(args, registry, log)
    if registry.settings.metrics_file:
        _write_metrics(args, registry, log)
    return 128 + got["signal"] if "signal" in got else EXIT_OK


def _write_page(args: argparse.Namespace, registry: Registry, log: EventLog) -> None:
    """The registry's report_html, after the tick: a page that cannot be written is a warning,
    never a failed tick."""
    from tickq.page import render

    path = registry.settings.report_html
    try:
        with session.connect(common.url(args), db.timeouts_of(registry.settings)) as conn:
            render.write_html(conn, path)
    except Exception as exc:
        ended = exit_of(exc)
        if ended is None:
            raise
        log.warning("report.unwritten", path=str(path), error=ended[1][-1])
    else:
        log.event("report.written", path=str(path))


# The metrics file is the tick's last work: it never holds the tick up longer than this (seconds),
# nor waits longer for a lock (another session's DDL); a file not written is a warning.
METRICS_FILE_TIMEOUTS = db.Timeouts(statement=10, lock=1)


def _write_metrics(args: argparse.Namespace, registry: Registry, log: EventLog) -> None:
    """The registry's metrics_file, after the tick (for node_exporter's textfile collector),
    replaced whole; a file that cannot be written is a warning, never a failed tick, and its
    statement is bounded (METRICS_FILE_TIMEOUTS), so never a tick held up."""
    from tickq.db.api import status
    from tickq.page import render

    path = registry.settings.metrics_file
    assert path is not None
    own = db.timeouts_of(registry.settings)
    timeouts = own._replace(statement=min(own.statement, METRICS_FILE_TIMEOUTS.statement),
                            lock=min(own.lock, METRICS_FILE_TIMEOUTS.lock))
    try:
        with session.connect(common.url(args), timeouts) as conn:
            text = status.metrics_text(conn)
        render.replace_file(render.html_target(path), text)
    except Exception as exc:
        ended = exit_of(exc)
        if ended is None and not isinstance(exc, OSError):
            raise
        error = ended[1][-1] if ended else f"{exc.strerror or exc}"
        log.warning("metrics.unwritten", path=str(path), error=error)
    else:
        log.event("metrics.written", path=str(path))


def cmd_run(args: argparse.Namespace) -> int:
    """Run one kind now; its output streams to stdout as it comes, tickq's own lines go to
    stderr. Exit 0 only when the run ended ok (see RUN_EXITS)."""
    from tickq.cli import arming

    registry = common.registry(args)
    stop = StopEvent()
    got = common.on_signals(stop)
    queue = dispatcher(args, registry, EventLog(args.log_format, sys.stderr), stop)
    confirmed: list[str] = []

    def confirm(refusal: str) -> str:
        confirmed.append(arming.confirm_first_run(args.kind, refusal, args.yes_i_ran_this_by_hand))
        return confirmed[0]

    try:
        claim, result = queue.run_now(args.kind, on_output=_stream, confirm=confirm)
    except ClaimRefused as exc:
        raise ClaimRefused(exc.sqlstate, f"{exc}{_hint(args, registry, exc)}") from None
    finally:
        queue.close()
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


def _stream(chunk: bytes) -> None:
    """A run's output to stdout as it comes."""
    try:
        sys.stdout.buffer.write(chunk)
        sys.stdout.buffer.flush()
    except BrokenPipeError:
        # `tickq run KIND | head`: the run goes on, its exit status stays the run's.
        discard_closed_pipe(sys.stdout)
        raise  # stops the streaming


def _hint(args: argparse.Namespace, registry: Registry, exc: ClaimRefused) -> str:
    if exc.sqlstate != UNKNOWN_KIND:
        return ""
    from tickq.cli.operator import did_you_mean

    with session.connect(common.url(args), db.timeouts_of(registry.settings)) as conn:
        return did_you_mean(conn, args.kind)


def cmd_sync(args: argparse.Namespace) -> int:
    from tickq.db.api import operator

    registry = common.registry(args)
    log = EventLog(args.log_format)
    queue = dispatcher(args, registry, log, sync=False)
    try:
        # A kind new to the queue is no drift (nothing differed), but a sync that added it says so.
        before = set(queue.link.call(operator.kind_names))
        drift = queue.sync()
    finally:
        queue.close()
    added = sorted(set(registry.kinds) - before)
    from tickq.host import programs

    for problem in programs.problems(registry):
        log.warning("command.cannot_start", problem=problem)
    lacking = common.agents_cannot_run(registry)
    if lacking:
        log.warning("agents.cannot_run", problem=lacking)
    if added:
        print(f"added {len(added)} kind{'s' if len(added) > 1 else ''} to the queue: "
              f"{', '.join(added)}" + ("" if drift else "; nothing else differed"))
    elif not drift:
        print("no drift: the queue matches the registry")
    return EXIT_OK


def cmd_migrate(args: argparse.Namespace) -> int:
    with session.connect(common.url(args), common.timeouts(args)) as conn:
        applied = session.migrate(conn)
    print("\n".join(applied) if applied else "up to date")
    return EXIT_OK


def cmd_psql(args: argparse.Namespace) -> int:
    url = common.url(args)
    from tickq.db import embedded

    psql = shutil.which("psql") or str(embedded.bin_dir() / "psql")
    os.execvp(psql, [psql, url, *args.psql_args])
    return EXIT_OK  # not reached


def cmd_demo(args: argparse.Namespace) -> int:
    """A real tick on the embedded PostgreSQL (or --database-url) in a fresh database."""
    from tickq.cli import status

    args.registry = str(DEMO_REGISTRY)
    registry = common.registry(args)
    server = session.server(args.database_url, db.timeouts_of(registry.settings))
    db.drop_database(server, "tickq_demo")
    args.database_url = db.create_database(server, "tickq_demo")
    print(f"# tickq demo: registry {registry.path}, database tickq_demo")
    ended = cmd_tick(args)
    print()
    status.cmd_status(argparse.Namespace(**{**vars(args), "json": False, "check": False,
                                            "wide": False, "watch": None}))
    return ended

