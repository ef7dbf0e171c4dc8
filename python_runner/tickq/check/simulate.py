"""The worst case behind `tickq check` and `tickq simulate`: the registry run with a moved clock
through the real SQL, in a scratch database of its own (in the state of a migrated template kept
on the scratch server: tickq.db.scratch), never in the user's queue. The clock, its parts, the
stretches it copies instead of simulating again and the merging of windows are SQL's
(sql/api/07_simulate.sql, 16_worst_case.sql, 18_repeats.sql); this module says which windows to
run, and where.

`check` judges the steady state: every kind starts at its own next slot in each window that
tickq.simulation_windows plans (every schedule covered once, a daylight-saving change day of
each zone with calendar kinds). `simulate` replays the registry deployed now: a kind new to a
queue is due at once.

The windows are independent simulations: given `Scratches`, `evaluate` runs them at the same
time, each group in a scratch database of its own (as many as the machine has cores), and folds
their reports in window order (tickq.simulation_fold), which gives exactly what simulating them
one after the other in one database gives (tests_py/test_simulate_beside.py). What one window
leaves behind in a database for the next is undone by tickq.simulation_start, but for the
arming of irreversible kinds (a manual run at the first window's start, once): a database whose
first window is not the first is armed the same way before it (`api.arm_as_first`).
"""

from __future__ import annotations

import datetime as dt
import os
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any

from tickq.db.api import check as api
from tickq.db.api.check import Connection, KindWait, SavedAgent, Scratches, Window
from tickq.db.errors import ScratchUnavailable
from tickq.registry import Registry

__all__ = ["KindWait", "ScratchUnavailable", "Scratches", "Window", "WorstCase", "evaluate",
           "replay", "scratch", "worst_case"]


def scratch(server_url: str, jobs: int | None = None, aside: bool = False
            ) -> AbstractContextManager[Scratches]:
    """Scratch databases for `evaluate` (in the migrated template's state; let go of afterwards),
    as many as it will simulate in at once made in the background from now on, and with `aside`
    one more for other work (the capacity verdict)."""
    return api.scratches(server_url, ready=_jobs(jobs), aside=aside)


def _jobs(jobs: int | None) -> int:
    return max(1, jobs or os.cpu_count() or 1)


@dataclass(frozen=True)
class WorstCase:
    windows: list[Window]
    kinds: list[KindWait] = field(default_factory=list)

    @property
    def starved(self) -> list[KindWait]:
        return [k for k in self.kinds if k.starved]


def stale_wait(kinds: Sequence[KindWait], stale_after: int) -> bool:
    """Whether a kind starved or waited stale_after or longer (a skipped slot past its catch_up
    starves it however short the wait): what a proposal of `check --suggest` must not show. A
    window that shows it decides that the worst case of all its windows does too (they are
    folded by longest wait, and starved if any window starved: tickq.simulation_fold)."""
    limit = dt.timedelta(seconds=stale_after)
    return any(k.starved or (k.longest_wait is not None and k.longest_wait >= limit)
               for k in kinds)


def worst_case(
    server_url: str, registry: Registry, durations: dict[str, float] | None,
    agents: Sequence[SavedAgent] = (),
) -> WorstCase:
    """Each kind's longest wait over every window tickq.simulation_windows plans."""
    with scratch(server_url) as sims:
        return evaluate(sims, registry, durations, agents)


def evaluate(
    conn: Connection | Scratches, registry: Registry, durations: dict[str, float] | None,
    agents: Sequence[SavedAgent] = (), jobs: int | None = None, last: bool = False,
    stop_stale: bool = False,
) -> WorstCase:
    """`worst_case` in the scratch database behind `conn`, window after window; given
    `Scratches`, in up to `jobs` of them at once (default: the machine's cores), whole windows
    each (cutting a window inside too did not pay on two cores: bench/README.md). With `last`
    the caller uses none beside the first again: each is put back for the next check as soon as
    its windows are done, while the first still simulates (tickq.db.scratch.put_back). With
    `stop_stale` each window stops soon after a kind first waits stale_after, and no window is
    begun once one has shown such a wait (`stale_wait`): the result then shows it, and nothing
    after it (a proposal that fails, known sooner)."""
    sims = conn if isinstance(conn, Scratches) else None
    first = sims.conn if sims else conn
    assert isinstance(first, Connection)
    if sims is not None and sims.preloaded(registry):  # synced while the queue was asked
        api.load_agents(first, agents)
    else:
        api.load(first, registry, agents)
    if sims is not None and sims.first_load is None:
        sims.first_load = (registry, agents)
    planned = api.windows(first)
    jobs = 1 if sims is None else _jobs(jobs)
    if sims is None or jobs == 1 or len(planned) == 1:
        worst = None
        for number, window in enumerate(planned, 1):
            api.simulate_window(first, window, durations, steady=True, stop_stale=stop_stale)
            worst = api.merge(first, worst, number, window)
            if stop_stale and stale_wait(api.worst_waits(first, worst),
                                         registry.settings.stale_after):
                break
        return WorstCase(planned, api.worst_waits(first, worst))
    beside = _Beside(sims, registry, agents, durations, planned, last, stop_stale)
    return WorstCase(planned, api.worst_waits(first, beside.run(jobs)))


class _Beside:
    """The windows in shares, one for each scratch database, simulated at the same time; their
    reports, folded in window order (tickq.simulation_fold), are what merging the windows one
    after the other in one database gives."""

    def __init__(self, sims: Scratches, registry: Registry, agents: Sequence[SavedAgent],
                 durations: dict[str, float] | None, planned: list[Window],
                 last: bool = False, stop_stale: bool = False) -> None:
        self.sims, self.registry, self.agents, self.durations = sims, registry, agents, durations
        self.planned, self.last, self.stop_stale = planned, last, stop_stale
        self.reports: dict[int, Any] = {}  # window number -> its report
        self.lock = threading.Lock()
        self.first_done = threading.Event()  # share 0's windows, in the first database
        self.stale = threading.Event()  # with stop_stale: a window showed a stale wait

    def shares(self, jobs: int) -> list[list[int]]:
        """The windows' numbers, whole and in order, in at most `jobs` shares of about as long
        a clock each (a window goes to the share whose edge is nearer)."""
        sizes = [(w.ends_at - w.starts_at).total_seconds() for w in self.planned]
        total, starts = sum(sizes), set()
        for j in range(1, jobs):
            at, number = total * j / jobs, 1
            while number < len(sizes) and at >= sizes[number - 1]:
                at -= sizes[number - 1]
                number += 1
            if at * 2 >= sizes[number - 1] and number < len(sizes):
                number += 1
            if number > 1:
                starts.add(number)
        shares: list[list[int]] = []
        for number in range(1, len(sizes) + 1):
            if number in starts or not shares:
                shares.append([])
            shares[-1].append(number)
        return shares

    def run(self, jobs: int) -> Any:
        shares = self.shares(jobs)
        pool = ThreadPoolExecutor(len(shares), thread_name_prefix="tickq-window")
        try:
            for done in [pool.submit(self.share, n, share) for n, share in enumerate(shares)]:
                done.result()
        except BaseException:
            self.sims.cancel()
            self.sims.conn.cancel_safe()
            raise
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
        # (with stop_stale, those begun before a stale wait)
        return api.fold_all(self.sims.conn, [self.reports[n] for n in sorted(self.reports)])

    def share(self, n: int, share: list[int]) -> None:
        """Share `n`'s windows in scratch database `n` (0: the first)."""
        if n:  # the first was loaded already
            sim, fresh = self.sims.beside(n)
            first = self.sims.first_load
            if fresh and first and self.sims.synced(sim, first[0]):  # its sync, copied
                if first[0] is not self.registry:
                    api.load_agents(sim, first[1])
            elif fresh and first and first[0] is not self.registry:
                api.load(sim, *first)
            api.load(sim, self.registry, self.agents)
        else:
            sim = self.sims.conn
        try:
            if share[0] != 1:  # armed as the first window arms
                api.arm_as_first(sim, self.planned[0], self.durations)
            done: list[tuple[Window, Any]] = []  # simulated here, with their reports
            for number in share:
                if self.stale.is_set():  # the proposal fails whatever the rest shows
                    break
                window = self.planned[number - 1]
                # A window that repeats one simulated here (month ends a quarter apart) is not
                # simulated again (not when stopping at a stale wait: that report is cut short).
                again = None if self.stop_stale else next(
                    ((w, r) for w, r in done if api.repeats(sim, w, window)), None)
                if again is not None:
                    report = api.merge_repeat(sim, None, number, window, *again)
                else:
                    api.simulate_window(sim, window, self.durations, steady=True,
                                        stop_stale=self.stop_stale)
                    report = api.merge(sim, None, number, window)
                    done.append((window, report))
                with self.lock:
                    self.reports[number] = report
                if self.stop_stale and stale_wait(api.worst_waits(sim, report),
                                                  self.registry.settings.stale_after):
                    self.stale.set()
        finally:
            if not n:
                self.first_done.set()
        if n and self.last and not self.first_done.is_set():  # free meanwhile: put back now
            api.put_back(sim)


def replay(
    server_url: str, registry: Registry, hours: float | None, durations: dict[str, float] | None,
    agents: Sequence[SavedAgent] = (), at: dt.datetime | None = None,
) -> WorstCase:
    """The registry deployed now, or `at`, for `hours` (default:
    tickq.simulation_replay_window's)."""
    with api.scratch(server_url) as conn:
        api.load(conn, registry, agents, now=at)
        window = api.replay_window(conn, hours, now=at)
        api.simulate_window(conn, window, durations, steady=False)
        return WorstCase([window], api.worst_waits(conn, api.merge(conn, None, 1, window)))
