"""The claim-run-report loop of one tick (tickq.dispatch.tick.Dispatcher.tick): claims at the
start, each time a run finishes, every `refill_every` seconds while runs go on, and when a retry
one of its reports scheduled comes due; stays for a retry due before the next tick; while runs
go on it asks for their cancels (dispatch/cancel.py).

The loop owns what one tick's loop knows (the runs it holds, their results, the earliest retry
its reports scheduled, when it last claimed). Of the dispatcher that runs it, it needs only
what `Dispatching` says: its context and connection, a claim, and a start."""

from __future__ import annotations

import queue
import time
from collections import Counter
from datetime import UTC, datetime
from typing import Protocol

from tickq.db.api import tick as api
from tickq.db.api.tick import Claim, LateReport, Reported
from tickq.db.connect import Link
from tickq.db.errors import DatabaseRefused, DatabaseUnavailable
from tickq.dispatch import kept, upkeep
from tickq.dispatch.cancel import Poller
from tickq.dispatch.context import Context
from tickq.dispatch.report import report_alone, report_in_transaction, retry_due_at, run_report
from tickq.host.process import RunResult

Results = queue.Queue[tuple[Claim, RunResult]]


class Dispatching(Protocol):
    """What the loop asks of the dispatcher that runs it."""

    ctx: Context
    link: Link  # the tick's own connection: the main thread's queries
    refill_every: float  # seconds between claims while runs go on

    def claim(self, limit: int) -> list[Claim]:
        """Claim up to `limit` due runs (tickq.claim_jobs)."""

    def start(self, claim: Claim, results: Results) -> None:
        """Start `claim`'s run in a thread of its own, which puts (claim, result) in `results`."""


class Counts(Protocol):
    """What the loop counts of a tick (tickq.dispatch.tick.TickSummary)."""

    claimed: int
    outcomes: Counter[str]
    unreported: int
    interrupted: bool


def tick_deadline(tick: float) -> float:
    """When the next tick would start (monotonic clock): the next clock-aligned tick, as the
    timers tickq installs fire, and never more than one tick length from now."""
    if tick <= 0:  # the database refuses it at sync; nothing to wait for if it did not
        return time.monotonic()
    wall = time.time()
    to_boundary = (wall // tick + 1) * tick - wall
    return time.monotonic() + min(tick, to_boundary)


class Loop:
    def __init__(self, d: Dispatching, summary: Counts, deadline: float) -> None:
        self.d, self.ctx, self.summary, self.deadline = d, d.ctx, summary, deadline
        self.slots = d.ctx.registry.settings.slots
        self.results: Results = queue.Queue()
        self.running: dict[int, Claim] = {}  # by id() of the claim: run ids can be reissued
        # After an asynchronous failover the new primary knows none of the claims it lost: it
        # may hand out a kind this loop still runs, or reuse a run id this loop still holds.
        # A claim of a kind still running is never started (a twin): the running copy's result
        # is reported for it, since that copy is the run the database asked for. A claim whose
        # run id was reissued is never reported under that id (its result is kept aside).
        self.twins: dict[int, Claim] = {}
        self.reissued: set[int] = set()
        self.cancels = Poller(d.ctx, d.link)  # an operator's `tickq cancel` of a held run
        # The earliest retry this loop's reports scheduled: claim again then, not only when a
        # run finishes or every refill_every seconds.
        self.retry_at: datetime | None = None
        self.can_claim = True  # until the stop event is set
        self.claim_now = True  # at the next chance (a free slot)
        self.last_claim = 0.0  # monotonic

    def run(self) -> None:
        stop = self.ctx.stop_event
        while True:
            if stop.is_set():
                self.summary.interrupted, self.can_claim = True, False
            if self._claim_due():
                self.claim_now, self.last_claim = False, time.monotonic()
                self._launch(self._claim(self.slots - len(self.running)))
            if not self.running:
                if self.can_claim and not stop.is_set() and self._wait_for_retry():
                    self.claim_now = True
                    continue
                self.summary.interrupted = self.summary.interrupted or stop.is_set()
                return
            self.cancels.maybe()
            try:
                claim, result = self.results.get(timeout=0.2)
            except queue.Empty:
                continue
            self._finished(claim, result)

    def _claim_due(self) -> bool:
        """Whether to claim now: a slot is free and a claim is asked for, the refill interval
        has passed, or a retry came due."""
        self.claim_now = (self.claim_now
                          or time.monotonic() - self.last_claim >= self.d.refill_every
                          or self._retry_due())
        return self.can_claim and self.slots > len(self.running) and self.claim_now

    def _retry_due(self) -> bool:
        """Whether a retry this loop's reports scheduled has come due (then forgotten: the
        claim that follows takes it, or another dispatcher did)."""
        if self.retry_at is None or datetime.now(UTC) < self.retry_at:
            return False
        self.retry_at = None
        return True

    def _claim(self, free: int) -> list[Claim]:
        try:
            return self.d.claim(free)
        except DatabaseUnavailable as exc:
            if not self.running:
                raise
            # Tried again every refill_every while runs go on: the database may be back.
            self.ctx.log.error("tick.claim_failed", error=str(exc))
            return []

    def _launch(self, claims: list[Claim]) -> None:
        for c in claims:
            for held in self.running.values():
                if held.run_id == c.run_id:
                    self.reissued.add(id(held))
            live = next((r for r in self.running.values() if r.kind == c.kind), None)
            if live is not None:
                self.ctx.log.error("run.claimed_twice", kind=c.kind, run_id=c.run_id,
                                   running_run_id=live.run_id, note=(
                                       "the database handed out a kind this dispatcher still "
                                       "runs (a claim lost in a failover?): not started; the "
                                       "running copy's result is reported for both"))
                self.twins.setdefault(id(live), c)
                continue
            self.running[id(c)] = c
            self.d.start(c, self.results)
        self.summary.claimed += len(claims)

    def _finished(self, claim: Claim, result: RunResult) -> None:
        """A run ended: report it (and its twin's), and claim into the slots it freed."""
        del self.running[id(claim)]
        self.summary.outcomes[result.outcome] += 1
        twin = self.twins.pop(id(claim), None)
        if twin is not None:
            self._kept(twin, result, self._reported(report_alone(self.ctx, self.d.link, twin,
                                                                 result)))
        if id(claim) in self.reissued:
            upkeep.keep_unknown(self.ctx, claim.kind, run_report(self.ctx, claim, result),
                                {"kind": claim.kind, "run_id": claim.run_id})
            self.summary.unreported += 1
            return
        refill = self.can_claim and not self.ctx.stop_event.is_set()
        free = self.slots - len(self.running) if refill else 0
        reported, claims = self._report_and_refill(claim, result, free)
        self._kept(claim, result, reported)
        if claims is None:
            self.claim_now = True  # the refill did not happen: claim at the top of the loop
        elif refill:
            self.last_claim = time.monotonic()
            self._launch(claims)

    def _report_and_refill(
        self, claim: Claim, result: RunResult, free: int
    ) -> tuple[bool, list[Claim] | None]:
        """Report a finished run and claim into the freed slots in one transaction: one commit
        per finish instead of two, and no savepoint (BEGIN, report, claim, COMMIT). If that
        fails, nothing of it was written: the report is made again alone (which logs a refusal,
        or retries a lost connection with reconnects), and the claims are None: the loop claims
        again later."""
        if free <= 0:
            return self._reported(report_alone(self.ctx, self.d.link, claim, result)), []
        claiming = False
        try:
            with self.d.link.transaction():
                done = report_in_transaction(self.ctx, self.d.link, claim, result)
                claiming = True
                claims = self.d.claim(free)
            return self._reported(done), claims
        except (DatabaseUnavailable, DatabaseRefused) as exc:
            if claiming or isinstance(exc, DatabaseUnavailable):
                self.ctx.log.warning("db.refill_failed", kind=claim.kind, run_id=claim.run_id,
                                     error=str(exc).strip())
            return self._reported(report_alone(self.ctx, self.d.link, claim, result)), None

    def _reported(self, done: Reported | LateReport | None) -> bool:
        """Whether the database recorded a report; the retry it scheduled is remembered."""
        due = retry_due_at(done)
        if due is not None and (self.retry_at is None or due < self.retry_at):
            self.retry_at = due
        return done is not None

    def _kept(self, claim: Claim, result: RunResult, reported: bool) -> None:
        """A report the database took is kept, in case a failover loses its commit; one it did
        not take is counted."""
        if reported:
            kept.keep(self.ctx, claim, run_report(self.ctx, claim, result))
        else:
            self.summary.unreported += 1

    def _wait_for_retry(self) -> bool:
        """With nothing running: wait for a retry that falls due before the next tick would
        start (a 30-second retry runs 30 seconds later, not a tick later). True when one is
        due now; False when there is none, or the stop event came first."""
        within = self.deadline - time.monotonic()
        if within <= 0:
            return False
        try:
            wait = self.d.link.call(api.next_due_wait, within)
        except DatabaseUnavailable:
            return False
        if wait is None:
            return False
        seconds = max(0.0, wait.total_seconds()) + 0.05  # claims take what is due at or before now
        self.ctx.log.event("tick.waiting", for_s=round(seconds, 1), reason="retry")
        return not self.ctx.stop_event.wait(seconds)
