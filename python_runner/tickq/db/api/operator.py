"""What `tickq pause|resume` and the did-you-mean hints read and write: an operator's pause,
kept beside the registry's `enabled`."""

from __future__ import annotations

from datetime import datetime

from tickq.db.api.session import Connection, Row, one, rows


def kind_names(conn: Connection) -> list[str]:
    """The names of the kinds not retired, in order."""
    return [row["name"] for row in rows(conn, "kind_names")]


def pause_kind(
    conn: Connection, kind: str, until: datetime | None, reason: str | None, by: str
) -> datetime | None:
    """Pause `kind` until `until` (None: until resumed); when it ends, None for never.
    NoAnswer (TQ003) for an unknown kind, InvalidInput (TQ060) for a bad end or reason."""
    found = one(conn, "pause_kind", {"kind": kind, "until": until, "reason": reason, "by": by})
    assert found is not None
    return found["paused_until"]


def resume_kind(conn: Connection, kind: str) -> bool:
    """Resume `kind`; whether it was paused. NoAnswer (TQ003) for an unknown kind."""
    found = one(conn, "resume_kind", {"kind": kind})
    assert found is not None
    return bool(found["was_paused"])


def forget_kind(conn: Connection, kind: str) -> int:
    """Delete retired `kind`, its runs and their steps; how many runs went. NoAnswer (TQ003)
    for an unknown kind, InvalidInput (TQ091) for one not retired or still leased."""
    found = one(conn, "forget_kind", {"kind": kind})
    assert found is not None
    return int(found["runs"])


def request_cancel(
    conn: Connection, target: str, reason: str | None, claimed_by: str | None
) -> Row:
    """Ask the dispatcher holding run `target` (a run id, or a kind: its live run) to stop it:
    the run, its kind, the dispatcher holding it, its lease, when it last asked for cancels and
    whether it was seen lately. The database records who asked from its session; `claimed_by`
    (the OS user and host) is kept as the client's claim. InvalidInput (TQ100-TQ102) for an
    unknown or ended target."""
    found = one(conn, "request_cancel",
                {"target": target, "reason": reason, "claimed_by": claimed_by})
    assert found is not None
    return found
