"""What `tickq next` and `tickq schedule` read: a schedule's next slots (sql/api/17_upcoming.sql's
tickq.schedule_slots, which asks next_slot, the one calendar)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from psycopg.types.json import Jsonb

from tickq.db.api.session import Connection, Row, rows


def schedule_slots(
    conn: Connection, name: str | None, entry: dict[str, Any], default_timezone: str,
    count: int, after: datetime | None = None,
) -> list[Row]:
    """The next `count` slots after `after` (now when None) of a schedule written as a registry
    entry (`every`, `at` with its day filters, or `cron`): each `at` (UTC), `local_at` (the wall
    time in its zone), `timezone` and `schedule` in words. A bad schedule is refused as the
    registry refuses it (InvalidInput naming the key; the kind too when `name` is given)."""
    return rows(conn, "schedule_slots", {"name": name, "entry": Jsonb(entry),
                                         "timezone": default_timezone, "count": count,
                                         "now": after})
