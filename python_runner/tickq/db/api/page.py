"""What the status page and `tickq history|upcoming` read (sql/api/13_page.sql)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import psycopg
from psycopg import IsolationLevel

from tickq.db.api.session import Connection, Row, rows

HOLDERS_NAMED = 3  # runs the page names per pool (the rest are counted)


@dataclass(frozen=True)
class PageData:
    """Everything the page shows, as the database answered it."""

    hours: float
    header: dict[str, Any]
    dispatchers: list[Row]
    timeline: list[Row]
    waiting: list[Row]
    slots: list[Row]
    pools: list[Row]
    capacity: list[Row]
    upcoming: list[Row]
    kinds: list[Row]


def page_data(
    conn: Connection, hours: float = 24.0, now: datetime | None = None,
    steps: int = 600, upcoming_limit: int = 50, pools_drawn: int = 8,
) -> PageData:
    """The page's data, read in one repeatable-read transaction, so every part agrees; the
    first `pools_drawn` pools (full or waited on first) carry their occupancy steps."""
    params = {"hours": hours, "now": now, "steps": steps, "limit": upcoming_limit,
              "pool_steps": steps, "pools_drawn": pools_drawn, "holders": HOLDERS_NAMED}
    with _snapshot(conn):
        return PageData(
            hours=hours,
            header=rows(conn, "page_header", params)[0],
            dispatchers=rows(conn, "page_dispatchers", params),
            timeline=rows(conn, "page_timeline", params),
            waiting=rows(conn, "page_waiting", params),
            slots=rows(conn, "page_slots", params),
            pools=[_pool_steps(p) for p in rows(conn, "page_pools", params)],
            capacity=rows(conn, "page_capacity", params),
            upcoming=rows(conn, "upcoming", params),
            kinds=[_failure_times(k) for k in rows(conn, "page_kinds", params)],
        )


@contextlib.contextmanager
def _snapshot(conn: Connection) -> Iterator[None]:
    """A repeatable-read, read-only transaction, said in its BEGIN (so a pooler's connection
    sets its timeouts after it: tickq.db.pooled)."""
    conn.isolation_level, conn.read_only = IsolationLevel.REPEATABLE_READ, True
    try:
        with conn.transaction():
            yield
    finally:
        with contextlib.suppress(psycopg.Error):  # a lost connection: nothing to restore
            conn.isolation_level, conn.read_only = None, None


def _failure_times(kind: Row) -> Row:
    """A kind's recent failures with finished_at a timestamptz again (jsonb carries it as text)."""
    failures = [{**f, "finished_at": datetime.fromisoformat(f["finished_at"])
                 if f.get("finished_at") else None} for f in kind["recent_failures"]]
    return {**kind, "recent_failures": failures}


def _pool_steps(pool: Row) -> Row:
    """A pool's occupancy steps as step_start/in_use rows again (jsonb carries each as a pair
    of an ISO time and a count), or none for a pool the page does not draw."""
    steps = [{"step_start": datetime.fromisoformat(at), "in_use": n}
             for at, n in pool["steps"] or []]
    return {**pool, "steps": steps}


def run_detail(conn: Connection, run_id: int) -> Row | None:
    """One run with its whole output tail, or None."""
    found = rows(conn, "run_detail", {"run_id": run_id, "now": None})
    return found[0] if found else None


def kind_history(conn: Connection, kind: str, limit: int) -> list[Row]:
    """A kind's runs, newest first; NoAnswer (TQ003) for an unknown kind."""
    return rows(conn, "kind_history", {"kind": kind, "limit": limit, "now": None})


def upcoming(conn: Connection, hours: float, limit: int) -> list[Row]:
    """What falls due in the next `hours`, in order (the first `limit` runs and each kind's
    next run), then the kinds held (unarmed, paused until resumed); `total` on every row counts
    the runs in the window."""
    return rows(conn, "upcoming", {"hours": hours, "limit": limit, "now": None})
