"""What `tickq status` reads: the queue's kinds, the stale ones, the health problems, the clock
and the registry's zone."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from psycopg.rows import dict_row

from tickq.db.api.session import Connection, Row, one, rows


def now(conn: Connection) -> datetime:
    """The database's clock, which every time of the queue is measured against."""
    with conn.cursor(row_factory=dict_row) as cur:
        found = cur.execute("SELECT now() AS now").fetchone()
    assert found is not None
    return found["now"]


def timezone(conn: Connection) -> str:
    """The registry's time zone, as the last sync stored it."""
    found = one(conn, "settings_timezone")
    assert found is not None
    return found["timezone"]


def queue_of(conn: Connection, source: dict[str, Any]) -> Row:
    """Which database this is (database, server: its host or socket folder, port) and whose
    queue (tickq.queue_registry_at): the registry it was last synced by (path, host, project,
    synced_at; synced false when none named one) and whether `source` ({path, resolved,
    project}) is that project. Never a password."""
    from psycopg.types.json import Jsonb

    found = one(conn, "queue_registry", {"source": Jsonb(source)})
    assert found is not None
    info = conn.info
    return {"database": info.dbname, "server": info.host, "port": info.port, **found}


def stale_due(conn: Connection) -> list[Row]:
    """Kinds due longer than stale_after and still unclaimed (tickq.stale_due)."""
    return rows(conn, "stale_due")


def queue_status(conn: Connection) -> list[Row]:
    """One row per kind not retired (tickq.queue_status)."""
    return rows(conn, "queue_status")


def slot_occupancy(conn: Connection) -> Row:
    """The global slots now: slots, busy (slot rows held: a run holds its weight), free, and
    holders, one per run: run_id, kind, dispatcher, since, leased_until, weight, pools
    (tickq.slot_occupancy_at)."""
    found = one(conn, "slot_occupancy", {"now": None})
    assert found is not None
    return found


def pool_occupancy(conn: Connection) -> list[Row]:
    """Each pool now, by name: pool, slots, busy, free, holders (as slot_occupancy's, with
    weight), kinds naming it, waiting (those due and unclaimed) (tickq.pool_occupancy_at)."""
    return rows(conn, "pool_occupancy", {"now": None})


def retired_kinds(conn: Connection) -> list[Row]:
    """The retired kinds, latest first: kind, retired_at, runs, last_run_at."""
    return rows(conn, "retired_kinds")


def health_problems(conn: Connection) -> list[Row]:
    """What a monitor should hear of: kind, problem, detail (tickq.health_problems)."""
    return rows(conn, "health_problems")


def metrics_text(conn: Connection) -> str:
    """The queue as Prometheus metrics, the text exposition format (tickq.metrics_text)."""
    found = one(conn, "metrics_text")
    assert found is not None
    return found["text"]


def explain_kind(conn: Connection, kind: str) -> dict[str, Any]:
    """Why `kind` is or is not running now, as the database decides it (tickq.explain_kind);
    NoAnswer (TQ003) for an unknown kind."""
    found = one(conn, "explain_kind", {"kind": kind, "now": None})
    assert found is not None
    return found["doc"]
