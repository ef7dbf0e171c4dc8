"""The capacity side of `tickq check`: what the user's queue knows that the check needs, only
read there, and the capacity verdict of the registry judged in a scratch database with that
history. The verdict (margin, the lane to act on) is tickq.capacity_verdict_at's
(sql/api/05_capacity.sql); the worst case is simulate.py's.
"""

from __future__ import annotations

from dataclasses import dataclass

from tickq.db.api import check as api
from tickq.db.api.check import CapacityReport, Connection, Observed, SavedAgent
from tickq.registry import Registry


@dataclass(frozen=True)
class QueueFacts:
    """What a check takes from the user's queue: all it reads there."""

    durations: dict[str, float] | None  # observed p95 by kind; None: every run takes its timeout
    agents: list[SavedAgent]  # user-built agents take slots like any kind
    seen: dict[str, Observed]  # the history the capacity verdict judges with


def check(sim: Connection, registry: Registry, facts: QueueFacts) -> CapacityReport:
    """The capacity of `registry` as the queue the `facts` come from would see it, judged in
    the scratch database behind `sim` (changed by nothing)."""
    return api.capacity(sim, registry, facts.agents, facts.seen)


def queue_facts(conn: Connection, registry: Registry, *, observed: bool) -> QueueFacts:
    """The queue's history and its user-built agents when `registry` has an [agents] section
    (without one a dispatcher runs no agent: those in the database may be another project's);
    with `observed` the simulation's durations are that history's."""
    agents = api.live_agents(conn) if registry.agents is not None else []
    seen = api.observed(conn)
    durations = {kind: o.seconds for kind, o in seen.items()} if observed else None
    return QueueFacts(durations, agents, seen)
