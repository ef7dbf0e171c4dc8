"""What `tickq check` and `tickq simulate` ask the database: the capacity verdict
(sql/api/05_capacity.sql) and the worst-case simulation (sql/api/07_simulate.sql,
16_worst_case.sql), each function one named query, rows by name.

The simulation runs in a scratch database of its own (`scratch`, a copy of a migrated template:
tickq.db.scratch), never in the user's queue: it
claims and reports as dispatcher "simulator". Its connection is autocommit, so the CALL of
tickq.simulate_window may commit each part of the clock, as tickq.simulation_parts asks.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from psycopg import Connection
from psycopg.rows import class_row, dict_row
from psycopg.types.json import Jsonb

from tickq import db
from tickq.db.api.scratches import (
    SavedAgent,
    Scratches,
    load,
    load_agents,
    put_back,
    scratch,
    scratches,
)
from tickq.registry import Registry

__all__ = ["CapacityReport", "Connection", "KindWait", "SavedAgent", "Scratches", "Window",
           "load", "load_agents", "put_back", "scratch", "scratches"]


@dataclass(frozen=True)
class KindCapacity:
    kind: str
    lane: str
    schedule: str
    runs_per_tick: Decimal
    expected_duration: dt.timedelta
    duration_source: str
    slot_share: Decimal


@dataclass(frozen=True)
class LaneCapacity:
    lane: str  # a priority, or "total"
    kinds: int
    runs_per_tick: Decimal
    slot_share: Decimal
    slots: int
    budget: Decimal
    fits: bool | None  # on the total row only


@dataclass(frozen=True)
class CapacityVerdict:
    fits: bool
    slot_share: Decimal
    budget: Decimal  # slots less the margin
    slots: int
    margin: Decimal
    runs_per_tick: Decimal
    worst_lane: str | None  # when it does not fit: the lane that takes the most slots
    worst_lane_share: Decimal | None


@dataclass(frozen=True)
class CapacityReport:
    kinds: list[KindCapacity]
    lanes: list[LaneCapacity]
    verdict: CapacityVerdict


@dataclass(frozen=True)
class Window:
    starts_at: dt.datetime
    hours: Decimal
    period: dt.timedelta  # the schedules covered; the rest opens and closes the window
    warm_up: dt.timedelta  # opened this early: runs started before the period hold slots
    dst_zone: str | None  # the zone whose daylight-saving change day is in the window
    month_end: dt.date | None = None  # the last day of the month whose end the window holds

    @property
    def ends_at(self) -> dt.datetime:
        return self.starts_at + dt.timedelta(hours=float(self.hours))


@dataclass(frozen=True)
class KindWait:
    kind: str
    lane: str
    runs: int
    longest_wait: dt.timedelta | None  # None: never due in any window
    starved: bool
    worst_due_at: dt.datetime | None  # when the longest wait began
    behind: list[str] | None  # a starved kind: who held the slots meanwhile, longest first
    in_window: int  # which window (1 = the first) held the longest wait
    # the last day of the month whose end the wait began at, in the kind's zone (its last or
    # first day: tickq.month_end_at), else None
    month_end: dt.date | None = None


class _Rollback(Exception):
    """Raised inside a transaction to roll it back on purpose."""


def _rows(conn: Connection, cls: type, query: str, params: Any = None) -> list[Any]:
    with conn.cursor(row_factory=class_row(cls)) as cur:
        return cur.execute(db.load_query(query), params).fetchall()


# ---------------------------------------------------------------- the user's queue, read


@dataclass(frozen=True)
class Observed:
    """What the queue's history says of a kind (its capacity view): the expected duration (the
    p95 of recent successful runs, never above the kind's timeout) and where it comes from."""

    seconds: float
    expected: dt.timedelta
    source: str  # "p95 of N runs"


def observed(conn: Connection) -> dict[str, Observed]:
    """Each kind the queue has history for (tickq.capacity, duration_source not "timeout")."""
    with conn.cursor(row_factory=dict_row) as cur:
        return {r.pop("kind"): Observed(**r)
                for r in cur.execute(db.load_query("observed_durations"))}


def observed_durations(conn: Connection) -> dict[str, float]:
    """Expected durations the queue has history for (p95 of recent successful runs), seconds."""
    return {kind: seen.seconds for kind, seen in observed(conn).items()}


# ---------------------------------------------------------------- judged in a scratch database


def capacity(conn: Connection, registry: Registry, agents: Sequence[SavedAgent] = (),
             seen: Mapping[str, Observed] | None = None) -> CapacityReport:
    """The capacity of `registry` as the queue whose history is `seen` (`observed`) would see
    it, with `agents` beside its kinds: judged in the scratch database behind `conn`, synced in
    a transaction that is rolled back, the history standing in for the scratch database's own
    (tickq.expected_duration's tickq.observed_durations). Pass the queue's agents only when the
    registry has an [agents] section: without one a dispatcher runs none of them, and the
    agents in the database may be another project's."""
    given = {kind: [f"{o.expected // dt.timedelta(microseconds=1)} microseconds", o.source]
             for kind, o in (seen or {}).items()}
    report: CapacityReport | None = None
    try:
        with conn.transaction():
            # (A scratch session keeps each cron string's calendar: the verdict reads each
            # kind's again for its week, its year and its description; tickq.db.scratch.)
            conn.execute("SELECT set_config('tickq.observed_durations', %s, true)",
                         (json.dumps(given),))
            load(conn, registry, agents)
            kinds = _rows(conn, KindCapacity, "capacity")
            # The kinds' rows sent back, not computed again for the lanes and the verdict
            # (tickq.capacity_lanes, tickq.capacity_verdict_of: capacity_total_at's and
            # capacity_verdict_at's arithmetic).
            shares = {"kinds": Jsonb([{"priority": k.lane, "runs_per_tick": str(k.runs_per_tick),
                                       "slot_share": str(k.slot_share)} for k in kinds])}
            report = CapacityReport(
                kinds=kinds,
                lanes=_rows(conn, LaneCapacity, "capacity_lanes", shares),
                verdict=_rows(conn, CapacityVerdict, "capacity_verdict_of", shares)[0],
            )
            raise _Rollback
    except _Rollback:
        pass
    assert report is not None
    return report


def live_agents(conn: Connection) -> list[SavedAgent]:
    """The queue's user-built agents, to simulate beside the registry: they take slots too."""
    return _rows(conn, SavedAgent, "agents_export")


def windows(conn: Connection, now: dt.datetime | None = None) -> list[Window]:
    """The windows `check` simulates as of `now` (default: the database's clock;
    tickq.simulation_windows)."""
    return _rows(conn, Window, "simulation_windows", {"now": now})


def replay_window(conn: Connection, hours: float | None, now: dt.datetime | None = None
                  ) -> Window:
    """The window `simulate` replays from `now` (default: the database's clock;
    tickq.simulation_replay_window)."""
    given = None if hours is None else Decimal(str(hours))
    return _rows(conn, Window, "simulation_replay_window", {"hours": given, "now": now})[0]


def simulate_window(
    conn: Connection, window: Window, durations: dict[str, float] | None, *, steady: bool,
    stop_stale: bool = False,
) -> None:
    """Move the clock through `window` in one CALL (tickq.simulate_window: each part of the
    clock committed on its own, server-side); with `steady`, every kind starts at its own next
    slot (tickq.simulation_start); with `stop_stale`, the clock stops soon after a kind first
    waits stale_after (its report then shows that wait, and the rest is not simulated)."""
    conn.execute(db.load_query("simulate_window"), {
        "until": window.ends_at, "durations": Jsonb(durations) if durations else None,
        "steady": steady, "stop": stop_stale, "start": window.starts_at})


def move_clock(conn: Connection, start: dt.datetime, until: dt.datetime,
               durations: dict[str, float] | None, *, steady: bool) -> None:
    """`simulate_window` from `start` through `until` (the same CALL): with `steady`, from
    tickq.simulation_start(start); without, on from where the clock stands."""
    conn.execute(db.load_query("simulate_window"), {
        "until": until, "durations": Jsonb(durations) if durations else None,
        "steady": steady, "stop": False, "start": start})


def parts(conn: Connection, start: dt.datetime, until: dt.datetime
          ) -> list[tuple[dt.datetime, dt.datetime]]:
    """The parts simulate_window moves the clock in from `start` through `until`
    (tickq.simulation_parts): (from, until) each."""
    rows = conn.execute(db.load_query("simulation_parts"), {"start": start, "until": until})
    return [(r[0], r[1]) for r in rows.fetchall()]


def start_steady(conn: Connection, start: dt.datetime) -> None:
    """tickq.simulation_start(start): every kind at its first slot at or after `start`."""
    conn.execute(db.load_query("simulation_start"), {"start": start})


def move_part(conn: Connection, start: dt.datetime, until: dt.datetime,
              durations: dict[str, float] | None) -> None:
    """One part of the clock, committed on its own (tickq.simulate_events), as simulate_window
    moves each."""
    conn.execute(db.load_query("simulate_events"), {
        "until": until, "durations": Jsonb(durations) if durations else None, "start": start})


def arm_as_first(conn: Connection, first: Window, durations: dict[str, float] | None) -> None:
    """Arm the irreversible kinds as simulating the first window does before anything else (a
    manual run each at its start, tickq.simulate_events), for a scratch database whose first
    window is a later one: the clock moved through the first window's first instant only."""
    move_clock(conn, first.starts_at, first.starts_at, durations, steady=True)


def merge(conn: Connection, worst: Any, number: int, window: Window,
          stretch: tuple[dt.datetime, dt.datetime] | None = None) -> Any:
    """`worst` (None before the first window) with window `number`'s waits folded in
    (tickq.simulation_merge), or those of a `stretch` of it (from, through); pass it on to the
    next window, then to `worst_waits`."""
    start, until = stretch or (window.starts_at, window.ends_at)
    with conn.cursor(row_factory=dict_row) as cur:
        row = cur.execute(db.load_query("simulation_merge"), {
            "worst": None if worst is None else Jsonb(worst), "window": number,
            "until": until, "start": start}).fetchone()
    assert row is not None
    return row["worst"]


def repeats(conn: Connection, earlier: Window, later: Window) -> bool:
    """Whether `later` makes `earlier`'s runs again, shifted (simulated from the steady start:
    tickq.simulation_window_repeats), so that `merge_repeat` gives its report from `earlier`'s."""
    if later.hours != earlier.hours:
        return False
    row = conn.execute(db.load_query("simulation_window_repeats"), {
        "start": earlier.starts_at, "until": earlier.ends_at,
        "shift": (later.starts_at - earlier.starts_at).total_seconds()}).fetchone()
    return bool(row and row[0])


def merge_repeat(conn: Connection, worst: Any, number: int, window: Window, earlier: Window,
                 report: Any) -> Any:
    """`merge` for window `number` where it `repeats` `earlier`, whose report (`merge` of it
    alone) is `report`: that report shifted (tickq.simulation_merge_repeat), nothing simulated."""
    with conn.cursor(row_factory=dict_row) as cur:
        row = cur.execute(db.load_query("simulation_merge_repeat"), {
            "worst": None if worst is None else Jsonb(worst), "window": number,
            "report": Jsonb(report),
            "shift": (window.starts_at - earlier.starts_at).total_seconds()}).fetchone()
    assert row is not None
    return row["worst"]


def fold_all(conn: Connection, reports: Sequence[Any]) -> str | None:
    """What `merge` gave for each of `reports` (windows simulated in other scratch databases),
    folded in turn from nothing (tickq.simulation_fold) in one statement: as JSON text, for
    `worst_waits` (None: no report)."""
    row = conn.execute(db.load_query("simulation_fold_all"), {"reports": Jsonb(list(reports))}
                       ).fetchone()
    assert row is not None
    return None if row[0] is None else str(row[0])


def worst_waits(conn: Connection, worst: Any) -> list[KindWait]:
    """Each kind's worst wait over the merged windows (tickq.simulation_worst); `worst` as
    `merge` gave it, or as JSON text (`fold_all`)."""
    return _rows(conn, KindWait, "simulation_worst",
                 {"worst": worst if isinstance(worst, str) else Jsonb(worst)})


def spread_offsets(conn: Connection, durations: dict[str, float] | None) -> dict[str, int]:
    """The offsets tickq.spread_offsets proposes for the scratch queue, seconds by kind."""
    hold = Jsonb(durations) if durations else None
    with conn.cursor(row_factory=dict_row) as cur:
        rows = cur.execute(db.load_query("spread_offsets"), {"durations": hold}).fetchall()
    return {r["kind"]: r["offset_seconds"] for r in rows}


def spread_times(conn: Connection, durations: dict[str, float] | None) -> dict[str, list[str]]:
    """The calendar times tickq.spread_times proposes for the scratch queue, "HH:MM" by kind."""
    hold = Jsonb(durations) if durations else None
    with conn.cursor(row_factory=dict_row) as cur:
        rows = cur.execute(db.load_query("spread_times"), {"durations": hold}).fetchall()
    return {r["kind"]: list(r["at_times"]) for r in rows}
