"""The database's verdict on a registry's values.

The rules on values (bounds, kind names, time zones, weekdays, times of day, repeats) have one
owner, the database: `tickq.sync_registry` refuses the first value it cannot take (TQ002), and
`tickq.registry_problems` lists every such value by the same rules. A registry file and the JSON
a script sends get the same verdict, and nothing here keeps a second copy of a rule.
"""

from __future__ import annotations

from typing import Any

import psycopg
from psycopg.types.json import Jsonb

from tickq import db
from tickq.db.errors import RegistryRefused
from tickq.registry import Problem, Registry

INVALID_REGISTRY = "TQ002"


def is_refusal(exc: psycopg.Error) -> bool:
    """TQ002, or a data exception (class 22: a value out of a type's range)."""
    state = exc.sqlstate or ""
    return state == INVALID_REGISTRY or state.startswith("22")


def problems(
    conn: psycopg.Connection, registry: Registry, exc: psycopg.Error | None = None
) -> list[Problem]:
    """Every value of `registry` the database refuses (none when it takes them all). `exc`, the
    refusal that led here, stands in when the list comes back empty."""
    file = str(registry.path)
    rows = conn.execute(
        db.load_query("registry_problems"), {"registry": Jsonb(registry.to_sync_json())}
    ).fetchall()
    found = [
        Problem(file, kind, _key(kind, key), message) for kind, key, message in rows
    ]
    if not found and exc is not None:
        found = [Problem(file, None, None, exc.diag.message_primary or str(exc).strip())]
    return found


def _key(kind: str | None, key: str | None) -> str | None:
    if key in (None, "*", "name"):
        return None
    return key if kind is not None else f"settings.{key}"


def sync(conn: psycopg.Connection, registry: Registry) -> list[Any]:
    """`tickq.sync_registry` on `conn` (in a savepoint when a transaction is open); a refusal
    becomes RegistryRefused listing every problem."""
    try:
        with conn.transaction():
            return conn.execute(
                db.load_query("sync_registry"), {"registry": Jsonb(registry.to_sync_json())}
            ).fetchall()
    except psycopg.Error as exc:
        if not is_refusal(exc) or conn.broken:
            raise
        raise RegistryRefused(problems(conn, registry, exc)) from exc
