"""What `tickq legacy check` reads of a queue (whether each irreversible kind is there at all,
and which still wait for their first run by hand) and what `legacy import` asks of it (which
kinds the tick runs late)."""

from __future__ import annotations

from psycopg.types.json import Jsonb

from tickq.db.api.session import Connection, Row, rows
from tickq.registry import Registry


def kind_states(conn: Connection, kinds: list[str]) -> dict[str, str | None]:
    """The queue_status state (which a reader role may read) of each of `kinds`; None for a
    kind the queue does not hold (a registry never synced to it)."""
    found = rows(conn, "irreversible_states", {"kinds": kinds})
    return {row["kind"]: row["state"] for row in found}


def tick_precision(conn: Connection, registry: Registry) -> list[Row]:
    """Each kind whose slots fall between the registry's ticks (tickq.tick_lateness): `kind`,
    `timezone`, `tick`, `late_by`, `slot_time` (the first time of day it runs that late) and
    `runs_time` (when it runs), and `on_time`, the tick that keeps every slot of the registry
    on time."""
    return rows(conn, "tick_precision", {"registry": Jsonb(registry.to_sync_json())})
