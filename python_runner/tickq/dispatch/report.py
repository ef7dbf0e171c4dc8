"""Telling the database how a run ended (tickq.report_run): alone, or inside a transaction of the
caller's. Two settings, two error policies, two functions:

- `report_alone`: the result on its own, with reconnects (Link.retrying). Nothing is raised:
  what the database cannot take is kept (the spool while it cannot be reached, `unknown/` for a
  run it does not know), a run no longer live is reported late when it can be, any other refusal
  is logged whole; the tick goes on watching its other commands.
- `report_in_transaction`: one try inside the caller's transaction (the loop reports a finish
  and claims into its slot in one). A refusal or a lost connection is raised: the transaction is
  lost with it, and the caller reports alone afterwards.

Both log what happened and return the database's answer: `Reported` (when the kind is due next,
and why), for a late report `LateReport`, or None when the result was not recorded.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from tickq.db.api import tick as api
from tickq.db.api.tick import RUN_NOT_LIVE, RUN_UNKNOWN, Claim, LateReport, Reported, RunReport
from tickq.db.connect import Link
from tickq.db.errors import DatabaseRefused, DatabaseUnavailable
from tickq.dispatch import upkeep
from tickq.dispatch.context import Context
from tickq.dispatch.drift import LOCKED
from tickq.host.process import RunResult


def run_report(ctx: Context, claim: Claim, result: RunResult) -> RunReport:
    """What this dispatcher reports of `claim`'s finished run."""
    return RunReport(run_id=claim.run_id, dispatcher=ctx.name, outcome=result.outcome,
                     exit_code=result.exit_code, output_tail=result.output_tail,
                     duration=result.duration)


def report_in_transaction(
    ctx: Context, link: Link, claim: Claim, result: RunResult
) -> Reported:
    """Report inside the caller's transaction: DatabaseRefused or DatabaseUnavailable raised."""
    done = link.call(api.report_run, run_report(ctx, claim, result))
    _finished(ctx, done, _fields(claim, result))
    return done


def report_alone(
    ctx: Context, link: Link, claim: Claim, result: RunResult
) -> Reported | LateReport | None:
    """Report with reconnects; None when the database did not record it (kept, or logged)."""
    done_run, fields = run_report(ctx, claim, result), _fields(claim, result)
    try:
        done = link.retrying("report", api.report_run, done_run)
    except DatabaseUnavailable as exc:
        upkeep.spool(ctx, claim.kind, done_run, fields, exc)
        return None
    except DatabaseRefused as exc:
        if exc.sqlstate == RUN_UNKNOWN:
            upkeep.keep_unknown(ctx, claim.kind, done_run, fields)
            return None
        late = _report_late(ctx, link, done_run, fields) if exc.sqlstate == RUN_NOT_LIVE else None
        if late is None:
            # Refused (TQ001: no longer live) or any other database error: logged whole, and the
            # tick goes on so the other commands it runs are still watched and reported.
            event = "run.report_refused" if exc.sqlstate == RUN_NOT_LIVE else "run.report_failed"
            ctx.log.error(event, **fields, sqlstate=exc.sqlstate, error=exc.message,
                          output_tail=result.output_tail[-2000:])
        return late
    _finished(ctx, done, fields)
    return done


def retry_due_at(done: Reported | LateReport | None) -> datetime | None:
    """When the retry a report scheduled falls due (None: it scheduled none)."""
    return done.next_due_at if isinstance(done, Reported) and done.next_trigger == "retry" \
        else None


def _fields(claim: Claim, result: RunResult) -> dict[str, Any]:
    """What the log lines of a report say of the run."""
    fields = {"kind": claim.kind, "run_id": claim.run_id, "outcome": result.outcome,
              "exit_code": result.exit_code, "duration_s": round(result.duration, 3)}
    if result.pid is None and result.outcome != "ok":
        # It never started (a missing program or cwd): the line says why, not only the run.
        fields["note"] = result.output_tail.strip()[-500:]
    return fields


def _finished(ctx: Context, done: Reported, fields: dict[str, Any]) -> None:
    ctx.log.event(
        "run.finished", level="info" if done.outcome == "ok" else "warning", **fields,
        failure_streak=done.failure_streak, next_due_at=done.next_due_at.isoformat(),
        next_trigger=done.next_trigger,
    )


def _report_late(
    ctx: Context, link: Link, done_run: RunReport, fields: dict[str, Any]
) -> LateReport | None:
    """A run no longer live when its result came (its lease expired into `lost` while this
    host was cut off): its real outcome is recorded as the spool's replay would. None unless
    the database took it."""
    try:
        late = link.call(api.report_late_run, done_run)
    except (DatabaseUnavailable, DatabaseRefused):
        return None
    if late.verdict in ("ignored", "unknown", LOCKED):
        return None
    ctx.log.warning("run.late_report", **fields, verdict=late.verdict)
    return late
