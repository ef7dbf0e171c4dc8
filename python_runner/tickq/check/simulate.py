"""The worst case behind `tickq check` and `tickq simulate`: the registry run with a moved clock
through the real SQL, in a scratch database of its own (a copy of a migrated template kept on
the server: tickq.db.scratch), dropped afterwards. The clock, its parts and the merging of
windows are SQL's (sql/api/07_simulate.sql, 16_worst_case.sql); this module only says which
windows to run.

`check` judges the steady state: every kind starts at its own next slot in each window that
tickq.simulation_windows plans (every schedule covered once, a daylight-saving change day of
each zone with calendar kinds). `simulate` replays the registry deployed now: a kind new to a
queue is due at once.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from tickq.db.api import check as api
from tickq.db.api.check import Connection, KindWait, SavedAgent, Window
from tickq.db.errors import ScratchUnavailable
from tickq.registry import Registry

__all__ = ["KindWait", "ScratchUnavailable", "Window", "WorstCase", "evaluate", "replay",
           "scratch", "worst_case"]

# A scratch database for `evaluate`: a copy of the migrated template, dropped afterwards.
scratch = api.scratch


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
    with api.scratch(server_url) as conn:
        return evaluate(conn, registry, durations, agents)


def evaluate(
    conn: Connection, registry: Registry, durations: dict[str, float] | None,
    agents: Sequence[SavedAgent] = (),
) -> WorstCase:
    """`worst_case` in the scratch database behind `conn`."""
    api.load(conn, registry, agents)
    planned = api.windows(conn)
    worst = None
    for number, window in enumerate(planned, 1):
        api.simulate_window(conn, window, durations, steady=True)
        worst = api.merge(conn, worst, number, window)
    return WorstCase(planned, api.worst_waits(conn, worst))


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
