"""`tickq check` and `tickq simulate`: the capacity invariant and the simulator, answered by the
SQL in sql/api/05_capacity.sql and 07_simulate.sql without touching the user's queue.

`check` loads the registry into the queue inside a transaction that is rolled back, so the
answer uses the queue's real history (95th percentiles of recent runs) and leaves nothing
behind. `simulate` runs in a scratch database of its own, created and dropped around it, since
its moved clock holds the queue's locks for seconds.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg.types.json import Jsonb

from tickq import db
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
            conn.execute(
                db.load_query("sync_registry"), {"registry": Jsonb(registry.to_sync_json())}
            )
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


def simulate(
    server_url: str, registry: Registry, hours: float, durations: dict[str, float] | None,
    agents: list[tuple[str, Any]] | None = None,
) -> list[tuple[Any, ...]]:
    """Run the registry (and `agents`, from `live_agents`) for `hours` with a moved clock in a
    scratch database; per kind: kind, lane, runs, longest wait, starved."""
    name = f"tickq_simulate_{uuid.uuid4().hex[:12]}"
    url = db.create_database(server_url, name)
    try:
        with db.connect(url) as conn:
            db.migrate(conn)
            with conn.transaction():
                conn.execute(
                    db.load_query("sync_registry"), {"registry": Jsonb(registry.to_sync_json())}
                )
                for name, fields in agents or ():
                    conn.execute(db.load_query("save_agent_fields"),
                                 {"name": name, "fields": Jsonb(fields)})
                rows = conn.execute(
                    db.load_query("simulate"),
                    {"hours": hours, "durations": Jsonb(durations) if durations else None},
                ).fetchall()
                raise _Rollback
    except _Rollback:
        pass
    finally:
        db.drop_database(server_url, name)
    return rows
