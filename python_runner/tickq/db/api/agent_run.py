"""What one agent run asks of the database (tickq.agents.runner): the agent, and a place for
each turn's transcript. Rows by name; psycopg's errors are left to tickq.db.connect.Link."""

from __future__ import annotations

from typing import Any

import psycopg
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb

from tickq.db.migrator import load_query


def load_agent(conn: psycopg.Connection, agent_id: int) -> dict[str, Any]:
    """The agent as data (prompt, limits, tools, owner, time zone): tickq.load_agent."""
    with conn.cursor(row_factory=dict_row) as cur:
        [agent] = cur.execute(load_query("load_agent"), {"agent_id": agent_id}).fetchall()
    return agent


def record_agent_turn(
    conn: psycopg.Connection, run_id: int, agent_id: int, turn: int, entry: dict[str, Any]
) -> None:
    """One turn's transcript entry, bounded by the database (tickq.record_agent_turn)."""
    conn.execute(load_query("record_agent_turn"),
                 {"run_id": run_id, "agent_id": agent_id, "turn": turn, "entry": Jsonb(entry)})
