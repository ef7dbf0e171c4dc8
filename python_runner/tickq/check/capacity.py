"""The capacity invariant of `tickq check`, answered by the SQL in sql/api/05_capacity.sql without
touching the user's queue (the worst-case simulation is worst_case.py).

`check` loads the registry into the queue inside a transaction that is rolled back, so the
answer uses the queue's real history (95th percentiles of recent runs) and leaves nothing
behind.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import psycopg

from tickq import db
from tickq.db import verdict
from tickq.registry import Registry


class _Rollback(Exception):
    """Raised inside a transaction to roll it back on purpose."""


@dataclass(frozen=True)
class CapacityReport:
    kinds: list[tuple[Any, ...]]  # kind, priority, schedule, runs/tick, expected, source, share
    lanes: list[tuple[Any, ...]]  # lane, kinds, runs/tick, share, slots, budget, fits

    @property
    def total(self) -> tuple[Any, ...]:
        return next(row for row in self.lanes if row[0] == "total")

    @property
    def fits(self) -> bool:
        return bool(self.total[6])


def check(conn: psycopg.Connection, registry: Registry) -> CapacityReport:
    """The capacity of `registry` as the queue behind `conn` would see it; changes nothing."""
    report: CapacityReport | None = None
    try:
        with conn.transaction():
            verdict.sync(conn, registry)
            report = CapacityReport(
                kinds=conn.execute(db.load_query("capacity")).fetchall(),
                lanes=conn.execute(db.load_query("capacity_total")).fetchall(),
            )
            raise _Rollback
    except _Rollback:
        pass
    assert report is not None
    return report


def observed_durations(conn: psycopg.Connection) -> dict[str, float]:
    """Expected durations the queue has history for (p95 of recent successful runs)."""
    return dict(conn.execute(db.load_query("observed_durations")).fetchall())


def live_agents(conn: psycopg.Connection) -> list[tuple[str, Any]]:
    """The queue's user-built agents (name and saved fields), to simulate beside the registry:
    they take slots like any kind."""
    return conn.execute(db.load_query("agents_export")).fetchall()
