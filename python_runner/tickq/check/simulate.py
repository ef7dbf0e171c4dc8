"""The worst case behind `tickq check` and `tickq simulate`: the registry run with a moved clock
through the real SQL, in a scratch database of its own (a copy of a migrated template kept on
the server: tickq.db.scratch), dropped afterwards. The clock, its parts and the merging of
windows are SQL's (sql/api/07_simulate.sql, 16_worst_case.sql); this module only says which
windows to run.

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

import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from tickq.db.api import check as api
from tickq.db.api.check import Connection, KindWait, SavedAgent, Scratches, Window
from tickq.db.errors import ScratchUnavailable
from tickq.registry import Registry

__all__ = ["KindWait", "ScratchUnavailable", "Scratches", "Window", "WorstCase", "evaluate",
           "replay", "scratch", "worst_case"]

# Scratch databases for `evaluate`: copies of the migrated template, dropped afterwards.
scratch = api.scratches


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
    with api.scratches(server_url) as sims:
        return evaluate(sims, registry, durations, agents)


def evaluate(
    conn: Connection | Scratches, registry: Registry, durations: dict[str, float] | None,
    agents: Sequence[SavedAgent] = (), jobs: int | None = None,
) -> WorstCase:
    """`worst_case` in the scratch database behind `conn`, window after window; given
    `Scratches`, in up to `jobs` of them at once (default: the machine's cores)."""
    sims = conn if isinstance(conn, Scratches) else None
    first = sims.conn if sims else conn
    assert isinstance(first, Connection)
    api.load(first, registry, agents)
    if sims is not None and sims.first_load is None:
        sims.first_load = (registry, agents)
    planned = api.windows(first)
    groups = groups_of(planned, 1 if sims is None else (jobs or os.cpu_count() or 1))
    if sims is None or len(groups) == 1:
        worst = None
        for number, window in enumerate(planned, 1):
            api.simulate_window(first, window, durations, steady=True)
            worst = api.merge(first, worst, number, window)
        return WorstCase(planned, api.worst_waits(first, worst))

    def run(n: int) -> dict[int, Any]:
        """Group n's windows, each window's report (merged into nothing) by its number."""
        sim, made = (first, False) if n == 0 else sims.beside(n)
        if made:
            if sims.first_load is not None and sims.first_load[0] is not registry:
                api.load(sim, *sims.first_load)
            api.load(sim, registry, agents)
        if n:  # not the first window: armed as the first window arms
            api.arm_as_first(sim, planned[0], durations)
        reports = {}
        for number in groups[n]:
            api.simulate_window(sim, planned[number - 1], durations, steady=True)
            reports[number] = api.merge(sim, None, number, planned[number - 1])
        return reports

    reports: dict[int, Any] = {}
    pool = ThreadPoolExecutor(len(groups), thread_name_prefix="tickq-window")
    try:
        for done in [pool.submit(run, n) for n in range(len(groups))]:
            reports.update(done.result())
    except BaseException:
        sims.cancel()
        first.cancel_safe()
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    worst = None
    for number in range(1, len(planned) + 1):
        worst = api.fold(first, worst, reports[number])
    return WorstCase(planned, api.worst_waits(first, worst))


def groups_of(planned: Sequence[Window], jobs: int) -> list[list[int]]:
    """The windows' numbers (1 = the first) in at most `jobs` groups of about equal simulated
    hours: the longest window first, each into the group with the fewest hours yet (the first
    group on a tie); each group in window order. Group 0 holds window 1."""
    groups: list[list[int]] = [[] for _ in range(max(1, min(jobs, len(planned))))]
    hours = [0.0] * len(groups)
    for number in sorted(range(1, len(planned) + 1), key=lambda n: (-planned[n - 1].hours, n)):
        n = hours.index(min(hours))
        groups[n].append(number)
        hours[n] += float(planned[number - 1].hours)
    return sorted((sorted(g) for g in groups if g), key=lambda g: g[0])


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
