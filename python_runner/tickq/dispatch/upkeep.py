"""Upkeep before a tick claims: commands a dead dispatcher on this host left running (the
ledger), their leases, results this host kept while the database was away (the spool), and
kinds waiting past their due time. Everything here runs on the tick's own connection."""

from __future__ import annotations

from typing import Any

from tickq.db.api import tick as api
from tickq.db.api.tick import RunReport, Stale
from tickq.db.connect import Link, first_line
from tickq.db.errors import DatabaseRefused, DatabaseUnavailable, NoAnswerInTime, transient
from tickq.dispatch.context import Context
from tickq.dispatch.drift import LOCKED
from tickq.host.spool import Rejected

UNKNOWN_RUN = "unknown"  # report_late_run's verdict for a run the database never had

RUN_REPORT_FIELDS = RunReport._fields
# SQLSTATE classes of a refusal of the values themselves (tickq's own, data exceptions,
# constraints): such a result is moved aside, never tried again.
VALUE_REFUSALS = ("TQ", "22", "23")


def stop_orphans(ctx: Context, link: Link) -> int:
    """Stop the commands a dead dispatcher on this host left running (tickq.host.ledger); how
    many. Runs before any claim, so an orphan is gone before its kind can be claimed again."""
    problem = ctx.ledger.problem()
    if problem:
        ctx.log.error("ledger.unusable", problem=problem)
    dead = ctx.ledger.reap_dead(ctx.grace)
    for s in dead:
        if s.signal is not None:
            ctx.log.warning(
                "run.orphan_stopped", kind=s.entry.get("kind"), run_id=s.entry.get("run_id"),
                pgid=s.pgid, signal=s.signal, dead_dispatcher_pid=s.entry.get("dispatcher_pid"),
            )
        release_dead_lease(ctx, link, s.entry)
    return sum(1 for s in dead if s.signal is not None)


def release_dead_lease(ctx: Context, link: Link, entry: dict[str, Any]) -> None:
    """The dispatcher of a ledger entry is provably dead (same host, its pid gone or reused)
    and its command is gone too: nobody will report the run, so it becomes `lost` now rather
    than when the lease expires (which holds its slot, and refuses `tickq run`, for up to the
    longest timeout)."""
    run_id, holder = entry.get("run_id"), entry.get("dispatcher")
    if not isinstance(run_id, int) or not isinstance(holder, str):
        return  # an alert command's entry: no lease
    try:
        released = link.call(api.release_dead_lease, run_id, holder)
    except (DatabaseUnavailable, DatabaseRefused) as exc:
        ctx.log.warning("run.release_failed", run_id=run_id, dead_dispatcher=holder,
                        error=str(exc).strip())
        return
    if released:
        ctx.log.warning("run.lost_released", kind=entry.get("kind"), run_id=run_id,
                        dead_dispatcher=holder)


def spool(
    ctx: Context, kind: str, result: RunReport, fields: dict[str, Any], exc: Exception
) -> None:
    """A result the database could not take within the reconnect budget: kept on the host and
    reported by the next tick (`replay_spool`), even if the lease expires into `lost`
    meanwhile; never silent."""
    try:
        path = ctx.spool.save({**result._asdict(), "kind": kind})
    except OSError as spool_error:
        # The whole result goes to the log; the lease will expire.
        ctx.log.error("run.unreported", **fields, error=str(exc), spool_error=str(spool_error),
                      output_tail=result.output_tail[-2000:])
        return
    ctx.log.error("run.spooled", **fields, error=str(exc), path=str(path))


def keep_unknown(ctx: Context, kind: str, result: RunReport, fields: dict[str, Any]) -> None:
    """A result for a run the database never had (a claim lost in a failover to a standby that
    had not received it, or another database): kept in the spool's rejected/ folder, named in
    the log and by `tickq status --check`, never dropped and never applied to whatever run
    the new database may give the same id."""
    reason = (f"run {result.run_id} of kind {kind!r} is not in this database: its claim was "
              "lost (a failover to a standby that had not received it?)")
    try:
        bad = ctx.spool.reject(ctx.spool.save({**result._asdict(), "kind": kind}).name, reason)
    except OSError as exc:
        ctx.log.error("run.unreported", **fields, error=reason, spool_error=str(exc),
                      output_tail=result.output_tail[-2000:])
        return
    _log_rejected(ctx, bad)


def replay_spool(ctx: Context, link: Link) -> int:
    """Report the results this host kept while the database was away (tickq.host.spool);
    how many. Files that are no result, and results the database refuses for good, are moved
    aside (a line each); a result meeting a transient error (a deadlock, a timeout) stays for
    the next tick, and a lost connection stops the replay (the rest stays spooled). Nothing
    here ends the tick."""
    scan = ctx.spool.scan()
    if scan.refused:
        ctx.log.warning("spool.refused", folder=str(ctx.spool.folder), reason=scan.refused)
    for bad in scan.rejected:
        _log_rejected(ctx, bad)
    done = 0
    for spooled in scan.results:
        r = spooled.result
        fields = {"kind": r["kind"], "run_id": r["run_id"], "outcome": r["outcome"]}
        try:
            late = link.call(api.report_late_run, RunReport(
                **{name: r[name] for name in RUN_REPORT_FIELDS}))
        except (DatabaseRefused, DatabaseUnavailable) as exc:
            if transient(exc):
                ctx.log.warning("run.late_report_deferred", **fields,
                                sqlstate=getattr(exc, "sqlstate", None), error=first_line(exc),
                                path=str(spooled.path))
                if isinstance(exc, DatabaseUnavailable) and not isinstance(exc, NoAnswerInTime):
                    break  # the connection is gone: the rest waits for the next tick
                continue
            ctx.log.error("run.late_report_failed", **fields, sqlstate=exc.sqlstate,
                          error=first_line(exc), output_tail=r["output_tail"][-2000:])
            if (exc.sqlstate or "").startswith(VALUE_REFUSALS):
                # Refused for good (a value the database rejects): logged whole, moved aside.
                _log_rejected(ctx, ctx.spool.reject(
                    spooled.path.name, f"refused by the database: {first_line(exc)}"))
            # Else (a privilege, a function the database lacks) it is tried again once fixed.
            continue
        if late.verdict == LOCKED:  # another session holds the kind's row: the next tick
            ctx.log.warning("run.late_report_deferred", **fields, reason="kind.locked",
                            path=str(spooled.path))
            continue
        if late.verdict == UNKNOWN_RUN or late.kind not in (None, r["kind"]):
            # Never had, or its id reissued to another kind's run (after an asynchronous
            # failover): kept aside for a person, never applied to whatever has that id now.
            _log_rejected(ctx, ctx.spool.reject(spooled.path.name, (
                f"run {r['run_id']} of kind {r['kind']!r} is not in this database: its claim "
                "was lost (a failover to a standby that had not received it?)")))
            continue
        ctx.log.warning("run.late_report", **fields, verdict=late.verdict)
        ctx.spool.forget(spooled)
        done += 1
    return done


def _log_rejected(ctx: Context, bad: Rejected) -> None:
    ctx.log.error("spool.rejected", file=str(ctx.spool.folder / bad.name), reason=bad.reason,
                  moved_to=str(bad.moved_to) if bad.moved_to else None)


def warn_stale(ctx: Context, link: Link) -> list[Stale]:
    """Warn of each kind waiting past its due time by more than stale_after."""
    rows = link.call(api.stale_due)
    for s in rows:
        ctx.log.warning("kind.stale", kind=s.kind, priority=s.priority,
                        due_at=s.due_at.isoformat(), waiting_s=round(s.waiting.total_seconds()))
    return rows
