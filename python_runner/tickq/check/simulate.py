"""The worst case behind `tickq check` and `tickq simulate`: the registry run with a moved clock
through the real SQL, in a scratch database of its own (a copy of a migrated template kept on
the server: tickq.db.scratch), dropped afterwards. The clock, its parts, the stretches it
copies instead of simulating again and the merging of windows are SQL's (sql/api/07_simulate.sql,
16_worst_case.sql, 18_repeats.sql); this module says which windows to run, and where.

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
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any

from tickq.db.api import check as api
from tickq.db.api.check import Connection, KindWait, SavedAgent, Scratches, Window
from tickq.db.errors import ScratchUnavailable
from tickq.registry import Registry

__all__ = ["KindWait", "ScratchUnavailable", "Scratches", "Window", "WorstCase", "evaluate",
           "replay", "scratch", "worst_case"]


def scratch(server_url: str, jobs: int | None = None) -> AbstractContextManager[Scratches]:
    """Scratch databases for `evaluate` (copies of the migrated template, dropped afterwards),
    as many as it will simulate in at once made in the background from now on."""
    return api.scratches(server_url, ready=_jobs(jobs))


def _jobs(jobs: int | None) -> int:
    return max(1, jobs or os.cpu_count() or 1)


@dataclass(frozen=True)
class WorstCase:
    windows: list[Window]
    kinds: list[KindWait] = field(default_factory=list)

    @property
    def starved(self) -> list[KindWait]:
        return [k for k in self.kinds if k.starved]


def worst_case(
    server_url: str, registry: Registry, durations: dict[str, float] | None,
    agents: Sequence[SavedAgent] = (),
) -> WorstCase:
    """Each kind's longest wait over every window tickq.simulation_windows plans."""
    with scratch(server_url) as sims:
        return evaluate(sims, registry, durations, agents)


def evaluate(
    conn: Connection | Scratches, registry: Registry, durations: dict[str, float] | None,
    agents: Sequence[SavedAgent] = (), jobs: int | None = None, cut: bool = False,
) -> WorstCase:
    """`worst_case` in the scratch database behind `conn`, window after window; given
    `Scratches`, in up to `jobs` of them at once (default: the machine's cores), a window each,
    and with `cut` windows cut inside too when there are more databases than windows (measured
    not to pay on two shared cores: bench/README.md)."""
    sims = conn if isinstance(conn, Scratches) else None
    first = sims.conn if sims else conn
    assert isinstance(first, Connection)
    api.load(first, registry, agents)
    if sims is not None and sims.first_load is None:
        sims.first_load = (registry, agents)
    planned = api.windows(first)
    jobs = 1 if sims is None else _jobs(jobs)
    if sims is None or jobs == 1:
        worst = None
        for number, window in enumerate(planned, 1):
            api.simulate_window(first, window, durations, steady=True)
            worst = api.merge(first, worst, number, window)
        return WorstCase(planned, api.worst_waits(first, worst))
    beside = _Beside(sims, registry, agents, durations, planned,
                     [api.parts(first, w.starts_at, w.ends_at) for w in planned], cut)
    return WorstCase(planned, api.worst_waits(first, beside.run(jobs)))


@dataclass(frozen=True)
class Stretch:
    """Parts `begin` up to `end` (not included) of window `number`'s clock, in one scratch
    database: from the window's first part, or from a part where the stretch before may stop."""
    number: int
    begin: int
    end: int


class _Beside:
    """The windows cut into stretches, one share of them for each scratch database, simulated
    at the same time and stitched together where the same runs follow.

    The parts of all windows laid end to end are cut into `jobs` shares of about as many parts,
    each share for one database (in order). A window cut in two goes on in the next database
    from simulation_start at the cut, which gives the same runs as the clock moved on from the
    stretch before only where that one stands as simulation_start would put it
    (tickq.simulation_at_rest). So the database of the stretch before moves on, part by part,
    until it is at rest where the next one was at rest too (within PROBE parts of the cut, which
    the next one moved part by part first, noting where it was at rest), and the next one's runs
    count from there; if it never is, the stretch before runs to the window's end and the next
    ones of that window do not count (a next one not at rest once in its first SEEN parts gives
    up at once: such a queue seldom rests). The reports of the stretches, folded in order
    (tickq.simulation_fold), are the window's: nothing runs or waits across an instant at rest,
    so each run, wait and holder is in one stretch.
    """

    PROBE = 48  # parts (12 hours of 15 minutes): how far past a cut to look for a common rest
    SEEN = 8  # parts (2 hours): a stretch not at rest once by then gives up

    def __init__(self, sims: Scratches, registry: Registry, agents: Sequence[SavedAgent],
                 durations: dict[str, float] | None, planned: list[Window],
                 parts: list[list[tuple[Any, Any]]], cut: bool = True) -> None:
        self.sims, self.registry, self.agents, self.durations = sims, registry, agents, durations
        self.planned, self.parts, self.cut = planned, parts, cut
        self.rests: dict[tuple[int, int], Future[list[int]]] = {}
        # (window, first part) -> (the part it ended before, None: the window's end; its report)
        self.reports: dict[tuple[int, int], tuple[int | None, Any]] = {}
        self.lock = threading.Lock()

    def shares(self, jobs: int) -> list[list[Stretch]]:
        """The windows' parts cut into at most `jobs` shares of about as many parts, in window
        order. A kind that skips slots past its catch_up starves in a stretch whatever its wait,
        which that stretch's report cannot tell the next one's: such registries are cut between
        windows only."""
        sizes = [len(p) for p in self.parts]
        total = sum(sizes)
        # Whole windows unless cut, and when there are no more databases than windows: cut
        # inside, a window loses the stretches a day before that its repeats copy
        # (simulation_repeat), and a queue that seldom rests pays for a probe in vain.
        whole = (jobs <= len(sizes) or not self.cut
                 or any(k.catch_up is not None for k in self.registry.kinds.values()))
        cuts: set[tuple[int, int]] = set()
        for j in range(1, jobs):
            at, number = round(total * j / jobs), 1
            while number < len(sizes) and at >= sizes[number - 1]:
                at -= sizes[number - 1]
                number += 1
            if whole and at:  # to the nearer edge of its window
                if at * 2 >= sizes[number - 1] and number < len(sizes):
                    number += 1
                at = 0
            if 0 < at < sizes[number - 1] or (at == 0 and number > 1):
                cuts.add((number, at))
        shares: list[list[Stretch]] = [[]]
        for number, size in enumerate(sizes, 1):
            begin = 0
            for at in sorted(a for n, a in cuts if n == number):
                if at:
                    shares[-1].append(Stretch(number, begin, at))
                shares.append([])
                begin = at
            shares[-1].append(Stretch(number, begin, size))
        return [share for share in shares if share]

    def run(self, jobs: int) -> Any:
        """Every window simulated in stretches beside each other: what merging the windows one
        after the other in one database gives."""
        shares = self.shares(jobs)
        for share in shares:
            for stretch in share:
                if stretch.begin:
                    self.rests[(stretch.number, stretch.begin)] = Future()
        pool = ThreadPoolExecutor(len(shares), thread_name_prefix="tickq-window")
        try:
            for done in [pool.submit(self.share, n, share) for n, share in enumerate(shares)]:
                done.result()
        except BaseException:
            self.sims.cancel()
            self.sims.conn.cancel_safe()
            raise
        finally:
            for rest in self.rests.values():  # a share that failed wakes the one waiting on it
                if not rest.done():
                    rest.set_result([])
            pool.shutdown(wait=True, cancel_futures=True)
        worst = None
        for number in range(1, len(self.planned) + 1):
            begin: int | None = 0
            while begin is not None:
                begin, report = self.reports[(number, begin)]
                worst = api.fold(self.sims.conn, worst, report)
        return worst

    def share(self, n: int, share: list[Stretch]) -> None:
        """Share `n`'s stretches in scratch database `n` (0: the first)."""
        try:
            if n:  # the first was loaded already
                sim, fresh = self.sims.beside(n)
                if fresh and self.sims.first_load and self.sims.first_load[0] is not self.registry:
                    api.load(sim, *self.sims.first_load)
                api.load(sim, self.registry, self.agents)
            else:
                sim = self.sims.conn
            if share[0] != Stretch(1, 0, share[0].end):  # armed as the first window arms
                api.arm_as_first(sim, self.planned[0], self.durations)
            for stretch in share:
                self.stretch(sim, stretch)
        finally:
            for stretch in share:
                rest = self.rests.get((stretch.number, stretch.begin))
                if rest is not None and not rest.done():
                    rest.set_result([])

    def stretch(self, sim: Connection, stretch: Stretch) -> None:
        number, parts = stretch.number, self.parts[stretch.number - 1]
        moved = stretch.begin  # the next part to move
        begins = [stretch.begin]
        api.start_steady(sim, parts[moved][0])
        if stretch.begin:  # part by part first: where it is at rest, the stretch before may stop
            while moved < min(stretch.begin + self.PROBE, stretch.end):
                if moved - stretch.begin >= self.SEEN and len(begins) == 1:
                    # A queue that rests this seldom would rarely meet the stretch before at
                    # rest: that one runs on to the window's end, this one gives up.
                    self.rests[(number, stretch.begin)].set_result([])
                    return
                api.move_part(sim, *parts[moved], self.durations)
                moved += 1
                if moved < stretch.end and api.at_rest(sim, parts[moved][0]):
                    begins.append(moved)
            self.rests[(number, stretch.begin)].set_result(begins)
        if moved < stretch.end:
            api.move_clock(sim, parts[moved][0], parts[stretch.end - 1][1], self.durations,
                           steady=False)
            moved = stretch.end
        end: int | None = None
        if stretch.end < len(parts):  # on until at rest where the next stretch was
            theirs = set(self.rests[(number, stretch.end)].result())
            while theirs and end is None and moved < min(stretch.end + self.PROBE, len(parts)):
                if moved in theirs and api.at_rest(sim, parts[moved][0]):
                    end = moved
                else:
                    api.move_part(sim, *parts[moved], self.durations)
                    moved += 1
            if end is None and moved < len(parts):
                api.move_clock(sim, parts[moved][0], parts[-1][1], self.durations, steady=False)
        until = parts[-1][1] if end is None else parts[end][0] - dt.timedelta(microseconds=1)
        window = self.planned[number - 1]
        for begin in begins:
            report = api.merge(sim, None, number, window, (parts[begin][0], until))
            with self.lock:
                self.reports[(number, begin)] = (end, report)


def replay(
    server_url: str, registry: Registry, hours: float | None, durations: dict[str, float] | None,
    agents: Sequence[SavedAgent] = (),
) -> WorstCase:
    """The registry deployed now, for `hours` (default: tickq.simulation_replay_window's)."""
    with api.scratch(server_url) as conn:
        api.load(conn, registry, agents)
        window = api.replay_window(conn, hours)
        api.simulate_window(conn, window, durations, steady=False)
        return WorstCase([window], api.worst_waits(conn, api.merge(conn, None, 1, window)))
