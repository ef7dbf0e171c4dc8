"""What `tickq check` asks the user's queue: the capacity verdict (sql/api/05_capacity.sql), in
a transaction rolled back, and the facts the worst case needs of it (observed durations, the
queue's agents). The worst case itself runs in scratch databases: tickq.db.api.check."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from psycopg import Connection
from psycopg.rows import class_row, dict_row

from tickq import db
from tickq.db.api import registry as registry_api
from tickq.registry import Registry


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
class SavedAgent:
    name: str
    fields: dict[str, Any]


class _Rollback(Exception):
    """Raised inside a transaction to roll it back on purpose."""


def rows(conn: Connection, cls: type, query: str, params: Any = None) -> list[Any]:
    with conn.cursor(row_factory=class_row(cls)) as cur:
        return cur.execute(db.load_query(query), params).fetchall()


def capacity(conn: Connection, registry: Registry) -> CapacityReport:
    """The capacity of `registry` as the queue behind `conn` would see it (its real history:
    95th percentiles of recent runs): synced in a transaction that is rolled back. The queue's
    agents count only when the registry has an [agents] section: without one a dispatcher runs
    none of them, and the agents in the database may be another project's."""
    report: CapacityReport | None = None
    try:
        with conn.transaction():
            registry_api.sync_registry(conn, registry)
            if registry.agents is None:
                for agent in live_agents(conn):
                    conn.execute(db.load_query("pause_agent"), {"name": agent.name})
            report = CapacityReport(
                kinds=rows(conn, KindCapacity, "capacity"),
                lanes=rows(conn, LaneCapacity, "capacity_total"),
                verdict=rows(conn, CapacityVerdict, "capacity_verdict")[0],
            )
            raise _Rollback
    except _Rollback:
        pass
    assert report is not None
    return report


def observed_durations(conn: Connection) -> dict[str, float]:
    """Expected durations the queue has history for (p95 of recent successful runs), seconds."""
    with conn.cursor(row_factory=dict_row) as cur:
        return {r["kind"]: r["seconds"] for r in cur.execute(db.load_query("observed_durations"))}


def live_agents(conn: Connection) -> list[SavedAgent]:
    """The queue's user-built agents, to simulate beside the registry: they take slots too."""
    return rows(conn, SavedAgent, "agents_export")
