"""The capacity side of `tickq check`: what the user's queue knows that the check needs, read
without changing it. The verdict (margin, the lane to act on) is tickq.capacity_verdict_at's
(sql/api/05_capacity.sql); the worst case is simulate.py's.
"""

from __future__ import annotations

from dataclasses import dataclass

from tickq.db.api import capacity as api
from tickq.db.api.capacity import CapacityReport, Connection, SavedAgent
from tickq.registry import Registry


@dataclass(frozen=True)
class QueueFacts:
    """What the worst case takes from the user's queue."""

    durations: dict[str, float] | None  # observed p95 by kind; None: every run takes its timeout
    agents: list[SavedAgent]  # user-built agents take slots like any kind


def check(conn: Connection, registry: Registry) -> CapacityReport:
    """The capacity of `registry` as the queue behind `conn` would see it; changes nothing."""
    return api.capacity(conn, registry)


def queue_facts(conn: Connection, registry: Registry, *, observed: bool) -> QueueFacts:
    """The queue's user-built agents when `registry` has an [agents] section (without one a
    dispatcher runs no agent: those in the database may be another project's), and with
    `observed` its observed durations."""
    agents = api.live_agents(conn) if registry.agents is not None else []
    return QueueFacts(api.observed_durations(conn) if observed else None, agents)
