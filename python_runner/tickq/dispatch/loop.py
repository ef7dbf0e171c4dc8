"""The claim-run-report loop of one tick (tickq.dispatch.tick.Dispatcher.tick): claims at the
start, each time a run finishes, every `refill_every` seconds while runs go on, and stays for a
retry due before the next tick; while runs go on it asks for their cancels (dispatch/cancel.py).
It drives the Dispatcher it is given (`d`, typed Any so this room does not import the one that
imports it)."""

from __future__ import annotations

import queue
import time
from typing import Any

from tickq.db.api import tick as api
from tickq.db.api.tick import Claim
from tickq.db.errors import DatabaseUnavailable
from tickq.dispatch import kept, upkeep
from tickq.dispatch.cancel import Poller
from tickq.host.process import RunResult


def tick_deadline(tick: float) -> float:
    """When the next tick would start (monotonic clock): the next clock-aligned tick, as the
    timers tickq installs fire, and never more than one tick length from now."""
    if tick <= 0:  # the database refuses it at sync; nothing to wait for if it did not
        return time.monotonic()
    wall = time.time()
    to_boundary = (wall // tick + 1) * tick - wall
    return time.monotonic() + min(tick, to_boundary)


class Loop:
    """The claim-run-report loop of one tick: claims at the start, each time a run finishes,
    every `refill_every` seconds while runs go on (a kind can come due, or a retry's backoff
    pass, during a long run), and stays for a retry due before the next tick."""

    def __init__(self, d: Any, summary: Any, deadline: float) -> None:
        self.d, self.summary, self.deadline = d, summary, deadline
        self.slots = d.registry.settings.slots
        self.results: queue.Queue[tuple[Claim, RunResult]] = queue.Queue()
        self.running: dict[int, Claim] = {}  # by id() of the claim: run ids can be reissued
        # After an asynchronous failover the new primary knows none of the claims it lost: it
        # may hand out a kind this loop still runs, or reuse a run id this loop still holds.
        # A claim of a kind still running is never started (a twin): the running copy's result
        # is reported for it, since that copy is the run the database asked for. A claim whose
        # run id was reissued is never reported under that id (its result is kept aside).
        self.twins: dict[int, Claim] = {}
        self.reissued: set[int] = set()
        self.cancels = Poller(d.ctx, d.link)  # an operator's `tickq cancel` of a held run

    def run(self) -> None:
        d, summary, running = self.d, self.summary, self.running
        can_claim, claim_now, last_claim = True, True, 0.0
        while True:
            if d.stop_event.is_set():
                summary.interrupted, can_claim = True, False
            free = self.slots - len(running)
            claim_now = (claim_now or time.monotonic() - last_claim >= d.refill_every
                         or d._retry_due())
            if can_claim and free > 0 and claim_now:
                claim_now, last_claim = False, time.monotonic()
                self._launch(self._claim(free))
            if not running:
                if can_claim and not d.stop_event.is_set() and self._wait_for_retry():
                    claim_now = True
                    continue
                summary.interrupted = summary.interrupted or d.stop_event.is_set()
                return
            self.cancels.maybe()
            try:
                claim, result = self.results.get(timeout=0.2)
            except queue.Empty:
                continue
            del running[id(claim)]
            summary.outcomes[result.outcome] += 1
            twin = self.twins.pop(id(claim), None)
            if twin is not None:
                if d.report(twin, result):
                    kept.keep(d.ctx, twin, d.run_report(twin, result))
                else:
                    summary.unreported += 1
            if id(claim) in self.reissued:
                upkeep.keep_unknown(d.ctx, claim.kind, d.run_report(claim, result),
                                    {"kind": claim.kind, "run_id": claim.run_id})
                summary.unreported += 1
                continue
            refill = can_claim and not d.stop_event.is_set()
            free = self.slots - len(running) if refill else 0
            reported, claims = d._report_and_refill(claim, result, free)
            if reported:  # committed: kept, in case a failover loses the commit
                kept.keep(d.ctx, claim, d.run_report(claim, result))
            else:
                summary.unreported += 1
            if claims is None:
                claim_now = True  # the refill did not happen: claim at the top of the loop
            elif refill:
                last_claim = time.monotonic()
                self._launch(claims)

    def _claim(self, free: int) -> list[Claim]:
        try:
            return self.d.claim(free)
        except DatabaseUnavailable as exc:
            if not self.running:
                raise
            # Tried again every refill_every while runs go on: the database may be back.
            self.d.log.error("tick.claim_failed", error=str(exc))
            return []

    def _launch(self, claims: list[Claim]) -> None:
        for c in claims:
            for held in self.running.values():
                if held.run_id == c.run_id:
                    self.reissued.add(id(held))
            live = next((r for r in self.running.values() if r.kind == c.kind), None)
            if live is not None:
                self.d.log.error("run.claimed_twice", kind=c.kind, run_id=c.run_id,
                                 running_run_id=live.run_id, note=(
                                     "the database handed out a kind this dispatcher still runs"
                                     " (a claim lost in a failover?): not started; the running"
                                     " copy's result is reported for both"))
                self.twins.setdefault(id(live), c)
                continue
            self.running[id(c)] = c
            self.d._start(c, self.results)
        self.summary.claimed += len(claims)

    def _wait_for_retry(self) -> bool:
        """With nothing running: wait for a retry that falls due before the next tick would
        start (a 30-second retry runs 30 seconds later, not a tick later). True when one is
        due now; False when there is none, or the stop event came first."""
        d = self.d
        within = self.deadline - time.monotonic()
        if within <= 0:
            return False
        try:
            wait = d.link.call(api.next_due_wait, within)
        except DatabaseUnavailable:
            return False
        if wait is None:
            return False
        seconds = max(0.0, wait.total_seconds()) + 0.05  # claims take what is due at or before now
        d.log.event("tick.waiting", for_s=round(seconds, 1), reason="retry")
        return not d.stop_event.wait(seconds)
