"""What `tickq check` and `tickq simulate` ask the database for the worst case
(sql/api/07_simulate.sql, 16_worst_case.sql, 18_*, 19_*), each function one named query, rows by
name; the capacity verdict is tickq.db.api.capacity's.

The simulation runs in a scratch database of its own (`scratch`, a copy of a migrated template:
tickq.db.scratch), never in the user's queue: it
claims and reports as dispatcher "simulator". Its connection is autocommit, so the CALL of
tickq.simulate_window may commit each part of the clock, as tickq.simulation_parts asks.
"""

from __future__ import annotations

import datetime as dt
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from contextlib import contextmanager
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from psycopg import Connection
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb

from tickq import db
from tickq.db import scratch as db_scratch
from tickq.db.api import registry as registry_api
from tickq.db.api.capacity import SavedAgent, rows
from tickq.registry import Registry

# A simulation is one long statement by design, watched by whoever started it.
SIMULATE_STATEMENT_TIMEOUT = 1800  # seconds


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


# ---------------------------------------------------------------- the scratch database


@contextmanager
def scratch(server_url: str) -> Iterator[Connection]:
    """An autocommit connection to a scratch database in the migrated template's state
    (tickq.db.scratch: a pool database held until the block ends, else a copy dropped then)."""
    with db_scratch.scratch(server_url, db.Timeouts(statement=SIMULATE_STATEMENT_TIMEOUT)) as conn:
        yield conn


class Scratches:
    """The scratch databases of one check: `conn`, the first, and copies beside it (`beside`),
    each a database and connection of its own, so windows can be simulated at the same time.
    The first `ready` of them are made at once, in the background, while the caller does other
    work; any other when asked. A copy handed out for the first time holds nothing yet: its
    caller loads it as the first was loaded (`first_load`), then as the moment asks."""

    def __init__(self, server_url: str, ready: int) -> None:
        self.first_load: tuple[Registry, Sequence[SavedAgent]] | None = None
        self._preload: tuple[Registry, Future[None]] | None = None
        self._server_url = server_url
        self._drops: list[Callable[..., Any]] = []  # each made copy's exit, which drops it
        self._lock = threading.Lock()
        self._handed: set[int] = set()
        self._making = ThreadPoolExecutor(max(1, ready), thread_name_prefix="tickq-scratch")
        self._copies: dict[int, Future[Connection]] = {}
        for n in range(max(1, ready)):
            self._copies[n] = self._making.submit(self._make, n)

    def _make(self, n: int) -> Connection:
        if n:  # after the first, which builds the template when it is missing
            self._copies[0].exception()
        made = scratch(self._server_url)
        conn = made.__enter__()
        with self._lock:
            self._drops.append(made.__exit__)
        return conn

    def preload(self, registry: Registry) -> None:
        """Sync `registry` into the first scratch database as soon as it is made, in the
        background, while the caller asks the queue what else to load (its agents:
        `preloaded`)."""
        self._preload = (registry, self._making.submit(
            lambda: load(self._copies[0].result(), registry)))

    def preloaded(self, registry: Registry) -> bool:
        """Whether `preload` synced this very registry into the first database (waits for it,
        and raises what the sync raised)."""
        if self._preload is None or self._preload[0] is not registry:
            return False
        self._preload[1].result()
        return True

    @property
    def conn(self) -> Connection:
        """The first scratch database (waits for it to be made; ScratchUnavailable if it cannot
        be)."""
        return self._copies[0].result()

    def beside(self, n: int) -> tuple[Connection, bool]:
        """Copy `n` beside the first (1, 2, ...), and whether it is handed out for the first
        time. Each copy is for one thread at a time."""
        with self._lock:
            if n not in self._copies:  # beyond the ones made at once
                self._copies[n] = self._making.submit(self._make, n)
            copy = self._copies[n]
            fresh = n not in self._handed
            self._handed.add(n)
        return copy.result(), fresh

    def settle(self) -> None:
        """Wait for the copies still being made (so every one is dropped with the others)."""
        self._making.shutdown(wait=True, cancel_futures=True)

    def drop(self) -> None:
        """Let go of every scratch database taken, all at once (a copy of its own is dropped,
        each DROP DATABASE on its own connection: a check waits for the slowest, not for their
        sum); the first error is raised after all were tried."""
        with self._lock:
            drops, self._drops = self._drops, []
        if not drops:
            return
        with ThreadPoolExecutor(len(drops), thread_name_prefix="tickq-drop") as pool:
            done = [pool.submit(exit_, None, None, None) for exit_ in drops]
        for future in done:
            future.result()

    def cancel(self) -> None:
        """Cancel what every copy made is running (a check interrupted)."""
        with self._lock:
            made = [c.result() for c in self._copies.values() if c.done() and not c.exception()]
        for conn in made:
            conn.cancel_safe()

    def cancel_until(self, work: Future[Any]) -> None:
        """Cancel what the copies run until `work` (a thread simulating in them) has ended: a
        cancel that falls between two of its statements is sent again. Nothing to do for work
        that ended."""
        while not work.done():
            self.cancel()
            wait([work], timeout=0.1)


def put_back(conn: Connection) -> None:
    """Put a pool database the check is done with back now (tickq.db.scratch.put_back)."""
    db_scratch.put_back(conn)


@contextmanager
def scratches(server_url: str, ready: int = 1) -> Iterator[Scratches]:
    """Scratch databases for a check, `ready` of them made at once in the background
    (`Scratches`); all let go of when the block ends."""
    sims = Scratches(server_url, ready)
    try:
        yield sims
    finally:
        try:
            sims.settle()
        finally:
            sims.drop()


def load(conn: Connection, registry: Registry, agents: Sequence[SavedAgent] = (),
         now: dt.datetime | None = None) -> None:
    """Make the scratch queue match `registry` (a later registry replaces an earlier one) and
    hold `agents`; synced `now` (default: the database's clock)."""
    registry_api.sync_registry(conn, registry, now=now)
    load_agents(conn, agents)


def load_agents(conn: Connection, agents: Sequence[SavedAgent]) -> None:
    """Save the queue's `agents` in the scratch queue, beside the registry's kinds."""
    for agent in agents:
        conn.execute(db.load_query("save_agent_fields"),
                     {"name": agent.name, "fields": Jsonb(agent.fields)})


def windows(conn: Connection, now: dt.datetime | None = None) -> list[Window]:
    """The windows `check` simulates as of `now` (default: the database's clock;
    tickq.simulation_windows)."""
    return rows(conn, Window, "simulation_windows", {"now": now})


def replay_window(conn: Connection, hours: float | None, now: dt.datetime | None = None
                  ) -> Window:
    """The window `simulate` replays from `now` (default: the database's clock;
    tickq.simulation_replay_window)."""
    given = None if hours is None else Decimal(str(hours))
    return rows(conn, Window, "simulation_replay_window", {"hours": given, "now": now})[0]


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


def fold(conn: Connection, worst: Any, more: Any) -> Any:
    """`worst` (None: nothing yet) with `more` folded in: what `merge` gave for later windows,
    simulated in another scratch database (tickq.simulation_fold)."""
    with conn.cursor(row_factory=dict_row) as cur:
        row = cur.execute(db.load_query("simulation_fold"), {
            "worst": None if worst is None else Jsonb(worst), "more": Jsonb(more)}).fetchone()
    assert row is not None
    return row["worst"]


def worst_waits(conn: Connection, worst: Any) -> list[KindWait]:
    """Each kind's worst wait over the merged windows (tickq.simulation_worst)."""
    return rows(conn, KindWait, "simulation_worst", {"worst": Jsonb(worst)})


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
