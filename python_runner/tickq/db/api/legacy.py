"""What `tickq legacy check` reads of a queue: which irreversible kinds still wait for their
first run by hand."""

from __future__ import annotations

from tickq.db.api.session import Connection, rows


def unarmed_kinds(conn: Connection, kinds: list[str]) -> list[str]:
    """Those of `kinds` the queue holds unarmed (queue_status, which a reader role may read)."""
    return [row["kind"] for row in rows(conn, "unarmed_kinds", {"kinds": kinds})]
