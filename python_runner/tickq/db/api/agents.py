"""What the `tickq agent` commands read and write (sql/api/09_agents.sql): the database checks
every value and keeps each agent's one queue row.

Refusals arrive as the classes the exit map knows: NoAnswer for an unknown agent (TQ041) or a
name taken (TQ042), InvalidInput for a value out of bounds (TQ040, TQ043) or a registry the
database refuses (TQ002).
"""

from __future__ import annotations

from typing import Any

from psycopg.types.json import Jsonb

from tickq.db.api import registry as registry_api
from tickq.db.api.session import Connection, Row, one, rows
from tickq.registry import Registry


def sync_registry(conn: Connection, registry: Registry) -> int:
    """Bring the registry's [agents] bounds and tools into the queue (the sync `tickq tick`
    does; drift is recorded in tickq.drift, not returned); the number of drift rows."""
    # From its file, as `tick` sends it: another project's registry retires nothing here.
    doc = {**registry.to_sync_json(), "source": registry_api.source(registry)}
    found = one(conn, "sync_registry_quiet", {"registry": Jsonb(doc)})
    assert found is not None
    return int(found["drift"])


def save_agent(conn: Connection, name: str, fields: dict[str, Any], create: bool) -> Row:
    """Add (`create`) or change an agent from the fields given; its id and name."""
    found = one(conn, "save_agent", {"name": name, "fields": Jsonb(fields), "create": create})
    assert found is not None
    return found


def agent(conn: Connection, name: str) -> Row | None:
    """One agent as `tickq agent show` prints it, or None."""
    return one(conn, "agent_show", {"name": name})


def next_runs(conn: Connection, name: str, count: int) -> list[Row]:
    """The agent's next `count` runs: run_at, local_time, timezone."""
    return rows(conn, "agent_next_runs", {"name": name, "count": count})


def agents(conn: Connection) -> list[Row]:
    """Every agent, by name."""
    return rows(conn, "agents")


def pause_agent(conn: Connection, name: str) -> Row:
    """Stop scheduling the agent; its id and name."""
    return _by_name(conn, "pause_agent", name)


def resume_agent(conn: Connection, name: str) -> Row:
    """Schedule the agent again from its next slot; its id and name."""
    return _by_name(conn, "resume_agent", name)


def remove_agent(conn: Connection, name: str) -> Row:
    """Remove the agent (its history stays); its id."""
    return _by_name(conn, "remove_agent", name)


def agent_runs(conn: Connection, name: str, limit: int) -> list[Row]:
    """The agent's runs, newest first."""
    return rows(conn, "agent_runs", {"name": name, "limit": limit})


def transcript(conn: Connection, name: str, run_id: int) -> list[Row]:
    """One run's turns, in order: turn, recorded_at, entry."""
    return rows(conn, "agent_transcript", {"name": name, "run_id": run_id})


def _by_name(conn: Connection, query: str, name: str) -> Row:
    found = one(conn, query, {"name": name})
    assert found is not None
    return found
