"""One tick: sync the registry, claim what is due, run it under watchdogs, report, refill.

The dispatcher holds no SQL of its own (it calls tickq.db.api.tick) and decides nothing the
database should decide: which kinds run, in what order and how many at once is
``tickq.claim_jobs``; what happens after a result is ``tickq.report_run``. Its own jobs are to
run the registry's command for each claim (tickq.dispatch.execute), to keep slots busy while
work is due, and never to drop a result silently. Upkeep (orphans, the spool, stale kinds) and
alerts are rooms of their own; what they share is a Context, not this class.
"""

from __future__ import annotations

import os
import socket
import threading
from collections import Counter
from collections.abc import Callable

from tickq.db import errors, migrator
from tickq.db.api import registry as registry_api
from tickq.db.api import tick as api
from tickq.db.api.registry import Drift
from tickq.db.api.tick import Claim, Stale
from tickq.db.connect import timeouts_of
from tickq.db.errors import CannotConnect, DatabaseRefused, DatabaseUnavailable
from tickq.dispatch import alerts, kept, upkeep
from tickq.dispatch.context import Context
from tickq.dispatch.drift import LOCKED, log_drift
from tickq.dispatch.loop import Loop, Results, tick_deadline
from tickq.dispatch.pings import Pinger
from tickq.host.ledger import Ledger
from tickq.host.private import keep_private
from tickq.host.process import RunResult
from tickq.host.spool import Spool
from tickq.log import EventLog
from tickq.registry import Registry


class TickSummary:
    """What one tick did, counted as it goes (a plain class: a dataclass costs a wake-up about
    a millisecond to define)."""

    def __init__(self) -> None:
        self.claimed = 0
        self.outcomes: Counter[str] = Counter()
        self.drift = 0
        self.stale = 0
        self.unreported = 0
        self.orphans = 0
        self.late_reports = 0
        self.interrupted = False


def default_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


class Dispatcher:
    """One dispatcher: its connection (a Link with the registry's timeouts) and the steps a
    tick or a manual run takes, each delegating to its room."""

    def __init__(
        self, url: str, registry: Registry, log: EventLog, *, name: str | None = None,
        stop_event: threading.Event | None = None, grace: float = 5.0, report_attempts: int = 8,
        reconnect_delay: float = 0.5, refill_every: float = 10.0, ledger: Ledger | None = None,
        replace_queue: bool = False, pinger: Pinger | None = None,
    ) -> None:
        ledger = ledger or Ledger()
        # The model's key, which this process hands to the agent runner: out of reach of the
        # commands it runs (tickq.host.private), as the database password is (cli/main.py).
        keep_private([registry.agents.api_key_env if registry.agents else None])
        self._own_pinger = pinger is None  # else the caller's (a tick's own check-ins) closes it
        self.ctx = Context(
            url=url, registry=registry, log=log, name=name or default_name(),
            stop_event=stop_event or threading.Event(), grace=grace, ledger=ledger,
            spool=Spool(ledger.folder), timeouts=timeouts_of(registry.settings),
            report_attempts=report_attempts, reconnect_delay=reconnect_delay,
            pinger=pinger or Pinger(log, registry.settings.ping_timeout), stops={},
        )
        self.refill_every = refill_every
        # A sync from this registry may retire the kinds of a queue another registry synced.
        self.replace_queue = replace_queue
        self.link = self.ctx.link()  # the tick's own: the main thread's queries
        self._drift: list[Drift] | None = None  # what migrate(sync=True) synced, not reported yet

    # What callers (the CLI, tests) read of the dispatcher.
    url = property(lambda self: self.ctx.url)
    registry = property(lambda self: self.ctx.registry)
    log = property(lambda self: self.ctx.log)
    name = property(lambda self: self.ctx.name)
    stop_event = property(lambda self: self.ctx.stop_event)
    grace = property(lambda self: self.ctx.grace)
    ledger = property(lambda self: self.ctx.ledger)
    spool = property(lambda self: self.ctx.spool)
    timeouts = property(lambda self: self.ctx.timeouts)

    # ------------------------------------------------------------ the database

    def close(self) -> None:
        self.link.close()
        if self._own_pinger and self.ctx.pinger is not None:
            self.ctx.pinger.close()

    def migrate(self, *, sync: bool = False) -> list[str]:
        """Migrate, then have the database judge the registry's values before anything uses
        one (its tick, its db_* timeouts): until then the tick's connection keeps timeouts the
        registry may only shorten, and it takes the registry's own once they are judged. With
        `sync` the judge is the sync, which refuses (and names) what a verdict would: one
        statement, not two; its drift is the next tick's or manual run's (`synced`)."""
        self.link.retime(registry_api.provisional_timeouts(self.registry.settings))
        self.link.call(api.refuse_read_only)  # it could claim nothing, due or not
        try:
            applied = self.link.call(migrator.migrate)
        except CannotConnect:
            raise
        except DatabaseUnavailable as exc:  # a timeout, or the connection went away
            raise DatabaseUnavailable(f"while migrating: {exc}") from exc
        if applied:  # one line however many files: a fresh database applies them all
            migrations = [step for step in applied if step.startswith("migration ")]
            self.log.event("db.migrated", migrations=len(migrations),
                           api=len(applied) > len(migrations), last=applied[-1])
        if sync:
            self._drift = self.sync()
        else:
            self.link.call(registry_api.refuse_bad_values, self.registry, from_file=True,
                           replace_queue=self.replace_queue)
        self.link.retime(self.ctx.timeouts)
        return applied

    # ------------------------------------------------------------ steps

    def stop_orphans(self) -> int:
        return upkeep.stop_orphans(self.ctx, self.link)

    def replay_spool(self) -> int:
        return upkeep.replay_spool(self.ctx, self.link)

    def warn_stale(self) -> list[Stale]:
        return upkeep.warn_stale(self.ctx, self.link)

    def send_alerts(self) -> list[threading.Thread]:
        return alerts.send_alerts(self.ctx, self.link)

    def execute(
        self, claim: Claim, on_output: Callable[[bytes], None] | None = None
    ) -> RunResult:
        from tickq.dispatch.execute import execute  # at the first run: an idle tick has none

        return execute(self.ctx, claim, on_output)

    def synced(self) -> list[Drift]:
        """The drift of the sync `migrate(sync=True)` made, once; else a sync now."""
        drift, self._drift = self._drift, None
        return self.sync() if drift is None else drift

    def sync(self) -> list[Drift]:
        """Make the queue match the registry; log and return each drift found (the database
        refuses bad values first: RegistryRefused names each)."""
        drift = self.link.call(registry_api.sync_registry, self.registry, self.name,
                               from_file=True, replace_queue=self.replace_queue)
        for d in drift:
            log_drift(self.log, self.name, d)
        return drift

    def claim(self, limit: int) -> list[Claim]:
        claims = self.link.call(api.claim_jobs, limit, self.name)
        for c in claims:
            self._claimed(c)
        return claims

    def claim_manual(self, kind: str, run_by: str | None = None) -> Claim:
        """A manual run; `run_by` is the person who confirmed it at a terminal, which the first
        run of an irreversible kind needs (and whose success arms the kind)."""
        claim = self.link.call(api.claim_manual, kind, self.name, run_by)
        self._claimed(claim)
        return claim

    def _claimed(self, c: Claim) -> None:
        self.log.event("run.claimed", kind=c.kind, run_id=c.run_id, attempt=c.attempt,
                       trigger=c.trigger)

    def start(
        self, claim: Claim, results: Results, on_output: Callable[[bytes], None] | None = None,
    ) -> None:
        """Start `claim`'s run in a thread of its own (its stop held, its start checked in and
        recorded), which puts (claim, result) in `results` when it ends, whatever happens."""

        def work() -> None:
            try:
                result = self.execute(claim, on_output)
            except BaseException as exc:  # noqa: BLE001 - a result must always come back
                note = f"[tickq: dispatcher error: {exc!r}]\n"
                result = RunResult("failed", None, note, 0.0, None)
            self.ctx.release(claim)
            self.ctx.ping_end(claim, result)
            results.put((claim, result))

        self.ctx.ping_run(claim, "/start")
        self.ctx.hold(claim)
        threading.Thread(target=work, name=f"run-{claim.kind}", daemon=True).start()
        try:
            self.link.call(api.start_run, claim.run_id, self.name)
        except (DatabaseUnavailable, DatabaseRefused) as exc:
            self.log.warning("run.start_unrecorded", kind=claim.kind, run_id=claim.run_id,
                             error=str(exc))

    # ------------------------------------------------------------ one tick

    def tick(self) -> TickSummary:
        """Sync, warn, then claim and run until nothing this tick holds runs and nothing more
        can be claimed. Claims again each time a run finishes."""
        summary = TickSummary()
        summary.orphans = self.stop_orphans()
        # The database judges the registry's values (`tick` among them) before any is used.
        summary.drift = sum(d.field != LOCKED for d in self.synced())
        deadline = tick_deadline(self.registry.settings.tick)
        summary.late_reports = self.replay_spool() + kept.restore(self.ctx, self.link)
        summary.stale = len(self.warn_stale())
        sent = self.send_alerts()
        Loop(self, summary, deadline).run()
        sent += self.send_alerts()
        alerts.join_alerts(self.ctx, sent)
        self._record_tick()
        return summary

    def _record_tick(self) -> None:
        """The health check's evidence that the timer fires (`tickq status --check`)."""
        try:
            self.link.call(api.record_tick, self.name, socket.gethostname())
        except (DatabaseUnavailable, DatabaseRefused) as exc:
            if getattr(exc, "sqlstate", None) == errors.READ_ONLY:  # nothing could be claimed
                raise errors.QueueReadOnly(errors.read_only(exc.message)) from None
            self.log.warning("tick.unrecorded", error=str(exc).strip())

    def run_now(
        self, kind: str, on_output: Callable[[bytes], None] | None = None,
        confirm: Callable[[str], str | None] | None = None,
    ) -> tuple[Claim, RunResult]:
        """A manual run of one kind (tickq.dispatch.manual.run_now)."""
        from tickq.dispatch.manual import run_now

        return run_now(self, kind, on_output, confirm)
