"""What `tickq legacy check` reads of a queue: whether each irreversible kind is there at all,
and which still wait for their first run by hand."""

from __future__ import annotations

from tickq.db.api.session import Connection, rows


def kind_states(conn: Connection, kinds: list[str]) -> dict[str, str | None]:
    """The queue_status state (which a reader role may read) of each of `kinds`; None for a
    kind the queue does not hold (a registry never synced to it)."""
    found = rows(conn, "irreversible_states", {"kinds": kinds})
    return {row["kind"]: row["state"] for row in found}
