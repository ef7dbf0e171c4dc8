"""The worst case behind `tickq check` and `tickq simulate`: the registry run with a moved clock
through the real SQL (sql/api/07_simulate.sql), in a scratch database of its own.

The clock moves in parts of a few hours with a commit after each: in one transaction every
claim and report adds a version of the same few kind and slot rows that nothing can prune, and a
week took minutes instead of seconds. The scratch database is dropped afterwards.

`check` judges the steady state: every kind starts at its own next slot in each window that
`tickq.simulation_windows` plans (every schedule covered once, a daylight-saving change day of
each zone with calendar kinds). `simulate` replays the registry deployed now: a kind new to a
queue is due at once.
"""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import psycopg
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb

from tickq import db
from tickq.db import verdict
from tickq.db.errors import DatabaseUnreachable
from tickq.registry import Registry
from tickq.registry.durations import format_duration

# The clock moves this far (rounded down to whole ticks) between commits.
PART = dt.timedelta(hours=3)


@dataclass(frozen=True)
class Window:
    starts_at: dt.datetime
    hours: Decimal
    period: dt.timedelta  # the schedules covered; the rest opens and closes the window
    warm_up: dt.timedelta  # opened this early: runs started before the period hold slots
    dst_zone: str | None  # the zone whose daylight-saving change day is in the window

    @property
    def ends_at(self) -> dt.datetime:
        return self.starts_at + dt.timedelta(hours=float(self.hours))


@dataclass(frozen=True)
class KindWait:
    kind: str
    lane: str
    runs: int
    longest_wait: dt.timedelta | None  # None: never due in the window
    starved: bool
    worst_due_at: dt.datetime | None  # when the longest wait began
    behind: tuple[str, ...]  # a starved kind: who held the slots meanwhile, longest first
    window: Window


@dataclass(frozen=True)
class WorstCase:
    windows: list[Window]
    kinds: list[KindWait] = field(default_factory=list)

    @property
    def starved(self) -> list[KindWait]:
        return [k for k in self.kinds if k.starved]


SIMULATE_STATEMENT_TIMEOUT = 1800  # seconds


class ScratchUnavailable(DatabaseUnreachable):
    """The server would not give the simulation a scratch database (e.g. no CREATEDB)."""

    def __str__(self) -> str:
        return f"cannot create a scratch database for the simulation: {self.args[0]}"


@contextmanager
def scratch(server_url: str) -> Iterator[psycopg.Connection]:
    """An autocommit connection to a fresh, migrated database; dropped afterwards."""
    name = f"tickq_simulate_{uuid.uuid4().hex[:12]}"
    try:
        url = db.create_database(server_url, name)
    except psycopg.Error as exc:
        cause = (exc.diag.message_primary if isinstance(exc, psycopg.DatabaseError) else None)
        raise ScratchUnavailable(cause or str(exc).strip() or type(exc).__name__) from None
    try:
        # A simulation is one long statement by design, watched by whoever started it.
        with db.connect(url, timeouts=db.Timeouts(statement=SIMULATE_STATEMENT_TIMEOUT)) as conn:
            db.migrate(conn)
            yield conn
    finally:
        db.drop_database(server_url, name)


def load(
    conn: psycopg.Connection, registry: Registry, agents: list[tuple[str, Any]] | None = None
) -> None:
    """Make the scratch queue match `registry` (a later registry replaces an earlier one) and
    hold `agents` (from capacity.live_agents: they take slots like any kind)."""
    verdict.sync(conn, registry)
    for agent, fields in agents or ():
        conn.execute(db.load_query("save_agent_fields"), {"name": agent, "fields": Jsonb(fields)})


def windows(conn: psycopg.Connection) -> list[Window]:
    with conn.cursor(row_factory=dict_row) as cur:
        return [Window(**row) for row in cur.execute(db.load_query("simulation_windows"))]


def run_window(
    conn: psycopg.Connection, window: Window, durations: dict[str, float] | None, *, steady: bool
) -> list[KindWait]:
    """Move the clock through `window`; with `steady`, every kind starts at its next slot."""
    settings = conn.execute(db.load_query("settings_tick")).fetchone()
    tick = settings[0] if settings else dt.timedelta(minutes=5)
    part = max(tick, tick * (PART // tick))
    hold = Jsonb(durations) if durations else None
    if steady:
        conn.execute(db.load_query("simulation_start"), {"start": window.starts_at})
    start, end = window.starts_at, window.ends_at
    while start <= end:
        # Each part ends just before the next one's first tick, which that part handles.
        until = min(start + part - dt.timedelta(microseconds=1), end)
        conn.execute(db.load_query("simulate_events"),
                     {"until": until, "durations": hold, "start": start})
        start += part
    with conn.cursor(row_factory=dict_row) as cur:
        rows = cur.execute(db.load_query("simulation_report"),
                           {"until": end, "start": window.starts_at}).fetchall()
    return [KindWait(**{**row, "behind": tuple(row["behind"] or ())}, window=window)
            for row in rows]


def worst_case(
    server_url: str, registry: Registry, durations: dict[str, float] | None,
    agents: list[tuple[str, Any]] | None = None,
) -> WorstCase:
    """Each kind's longest wait over every window `tickq.simulation_windows` plans."""
    with scratch(server_url) as conn:
        return evaluate(conn, registry, durations, agents)


def evaluate(
    conn: psycopg.Connection, registry: Registry, durations: dict[str, float] | None,
    agents: list[tuple[str, Any]] | None = None,
) -> WorstCase:
    """`worst_case` in the scratch database behind `conn`."""
    load(conn, registry, agents)
    planned = windows(conn)
    worst: dict[str, KindWait] = {}
    for window in planned:
        for wait in run_window(conn, window, durations, steady=True):
            seen = worst.get(wait.kind)
            if seen is None:
                worst[wait.kind] = wait
            elif _longer(wait, seen):
                worst[wait.kind] = _merged(wait, seen)
            else:
                worst[wait.kind] = _merged(seen, wait)
    return WorstCase(planned, list(worst.values()))


def replay(
    server_url: str, registry: Registry, hours: float | None, durations: dict[str, float] | None,
    agents: list[tuple[str, Any]] | None = None,
) -> WorstCase:
    """The registry deployed now, for `hours` (default: the first planned window's length)."""
    with scratch(server_url) as conn:
        load(conn, registry, agents)
        planned = windows(conn)
        now = conn.execute("SELECT now()").fetchone()[0]
        first = planned[0]
        # From now, a registry deployed now: nothing ran before, so no warm-up.
        length = (Decimal(str(hours)) if hours is not None
                  else first.hours - Decimal(first.warm_up.total_seconds()) / 3600)
        window = Window(now, length, first.period, dt.timedelta(0), None)
        return WorstCase([window], run_window(conn, window, durations, steady=False))


def _longer(a: KindWait, b: KindWait) -> bool:
    return (a.longest_wait or dt.timedelta(-1)) > (b.longest_wait or dt.timedelta(-1))


def _merged(worst: KindWait, other: KindWait) -> KindWait:
    """`worst`'s wait, with the runs of both windows."""
    return KindWait(worst.kind, worst.lane, worst.runs + other.runs, worst.longest_wait,
                    worst.starved or other.starved, worst.worst_due_at, worst.behind, worst.window)


# ---------------------------------------------------------------- text for people


def utc(moment: dt.datetime) -> str:
    return moment.astimezone(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")


def human(delta: dt.timedelta) -> str:
    seconds = int(delta.total_seconds())
    return format_duration(seconds) if seconds >= 1 else "0s"


def describe(window: Window) -> list[str]:
    """Which window was covered and why, in short lines (check's output fits 100 columns)."""
    lines = [f"{utc(window.starts_at)} to {utc(window.ends_at)}: every schedule once "
             f"({human(window.period)}),",
             "opened the longest timeout early and closed stale_after late"]
    if window.dst_zone:
        lines.append(f"holds a daylight-saving change of {window.dst_zone}")
    return lines


def wait_rows(result: WorstCase) -> list[list[str]]:
    """kind, lane, runs, longest wait (or "not due in window"), starved, from."""
    return [
        [k.kind, k.lane, str(k.runs),
         "not due in window" if k.longest_wait is None else human(k.longest_wait),
         "STARVED" if k.starved else "-",
         utc(k.worst_due_at) if k.worst_due_at else "-"]
        for k in result.kinds
    ]


def starved_lines(result: WorstCase, stale_after: int, most: int = 6) -> list[str]:
    """One line per starved kind: the worst wait, when it began, and what it waited behind."""
    lines = []
    for k in sorted(result.starved, key=lambda k: (-(k.longest_wait or dt.timedelta()), k.kind)):
        behind = ", ".join(k.behind[:most]) + (
            f" and {len(k.behind) - most} more" if len(k.behind) > most else "")
        lines.append(
            f"{k.kind} ({k.lane}) waits {human(k.longest_wait or dt.timedelta())}, longer than "
            f"stale_after {format_duration(stale_after)}: due {utc(k.worst_due_at)}"
            if k.worst_due_at else f"{k.kind} ({k.lane}) starved")
        if behind:
            lines[-1] += f", behind {behind}"
    return lines
