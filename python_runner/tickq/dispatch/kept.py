"""Reports kept after the database took them, so an asynchronous failover cannot turn a result
the dispatcher saw committed into `lost`.

A primary that dies before its standby received a commit takes that commit with it: the new
primary still holds the run `running`, leased to the dispatcher that reported it, and would
record it `lost` when the lease ends. So each tick keeps what it reported in its ledger folder
(`<ledger folder>/reported/<run id>.json`, mode 0600, the spool's format and rules: host/spool.py)
for as long as a lease, and each later tick on the host asks the database (one read, only when
something is kept) which of those runs are still live. A run still leased exactly as it was
when reported (same kind, same dispatcher, same lease end: no claim since reissued its id), that
no process of this host runs now (the ledger), gets its real result as the spool's replay gives
one (tickq.report_late_run), logged `run.report_restored`. Every other kept report is dropped:
the database has its result, or the id names another run now.
"""

from __future__ import annotations

import time
from datetime import datetime
from hashlib import sha256
from typing import Any

from tickq.db.api import tick as api
from tickq.db.api.tick import Claim, RunReport
from tickq.db.connect import Link, first_line
from tickq.db.errors import DatabaseRefused, DatabaseUnavailable
from tickq.dispatch.context import Context
from tickq.dispatch.drift import LOCKED
from tickq.host.spool import Spooled

FIELDS = RunReport._fields


def queue_of(url: str) -> str:
    """Which queue a kept report belongs to (projects of one user share a ledger folder)."""
    return sha256(url.encode()).hexdigest()


def keep(ctx: Context, claim: Claim, report: RunReport) -> None:
    """Keep a report the database took, for as long as its lease. Never fails the tick: a
    report that cannot be kept only loses this safety net (the ledger's problems are logged by
    every tick as `ledger.unusable`)."""
    if claim.lease_s is None or not ctx.ledger.usable:
        return
    record = {**report._asdict(), "kind": claim.kind, "kept": {
        "until": time.time() + max(claim.lease_s, 0.0), "lease": claim.leased_until.isoformat(),
        "queue": queue_of(ctx.url)}}
    try:
        ctx.kept.save(record, durable=False)  # the database has it: this is the second copy
    except OSError:
        return


def restore(ctx: Context, link: Link) -> int:
    """Report again each kept report whose run a failover left live (see the module's text);
    how many. Nothing here ends the tick."""
    fresh = _fresh(ctx)
    if not fresh:
        return 0
    try:
        live = {lease.run_id: lease for lease in link.call(
            api.live_leases, [s.result["run_id"] for s in fresh])}
    except (DatabaseUnavailable, DatabaseRefused) as exc:
        ctx.log.warning("run.restore_deferred", error=first_line(exc))
        return 0
    held = ctx.ledger.held_runs()
    done = 0
    for spooled in fresh:
        r = spooled.result
        lease = live.get(r["run_id"])
        if lease is None or not _same_claim(r, lease):
            ctx.kept.forget(spooled)  # the database has its result, or the id is another run's
        elif r["run_id"] not in held:
            done += _report(ctx, link, spooled)
    return done


def _fresh(ctx: Context) -> list[Spooled]:
    """This queue's kept reports still within their lease; the expired ones forgotten."""
    scan = ctx.kept.scan()
    if scan.refused:
        ctx.log.warning("run.reports_not_kept", folder=str(ctx.kept.folder), reason=scan.refused)
    for bad in scan.rejected:
        ctx.log.warning("run.kept_report_rejected", file=bad.name, reason=bad.reason)
    queue, now, fresh = queue_of(ctx.url), time.time(), []
    for spooled in scan.results:
        kept = spooled.result["kept"] or {}
        until = kept.get("until")
        if not isinstance(until, (int, float)) or until < now:
            ctx.kept.forget(spooled)
        elif kept.get("queue") == queue and isinstance(kept.get("lease"), str):
            fresh.append(spooled)
    return fresh


def _same_claim(r: dict[str, Any], lease: api.Lease) -> bool:
    try:
        until = datetime.fromisoformat(r["kept"]["lease"])
    except ValueError:
        return False
    return (lease.kind, lease.leased_by, lease.leased_until) == (r["kind"], r["dispatcher"], until)


def _report(ctx: Context, link: Link, spooled: Spooled) -> int:
    r = spooled.result
    fields = {"kind": r["kind"], "run_id": r["run_id"], "outcome": r["outcome"]}
    try:
        late = link.call(api.report_late_run, RunReport(**{name: r[name] for name in FIELDS}))
    except (DatabaseUnavailable, DatabaseRefused) as exc:
        ctx.log.warning("run.restore_deferred", **fields, error=first_line(exc))
        return 0
    if late.verdict == LOCKED:
        return 0  # another session holds the kind's row: the next tick
    ctx.log.warning("run.report_restored", **fields, verdict=late.verdict,
                    reason="a report the database took was lost (an asynchronous failover?)")
    ctx.kept.forget(spooled)
    return 1
