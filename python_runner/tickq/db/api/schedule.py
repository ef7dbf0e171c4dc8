"""What `tickq next` and `tickq schedule` read: a schedule's next slots (sql/api/17_upcoming.sql's
tickq.schedule_slots, which asks next_slot, the one calendar)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from psycopg.types.json import Jsonb

from tickq.db.api.session import Connection, Row, rows
from tickq.registry import Registry


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


def schedule_warnings(conn: Connection, registry: Registry) -> list[str]:
    """What `tickq check` warns about in the registry's schedules without refusing them (a
    cron string whose day of the month and weekday are both restricted), one line each."""
    found = rows(conn, "schedule_warnings", {"registry": Jsonb(registry.to_sync_json())})
    return [f'{registry.path}: kind "{r["kind"]}", key "{r["key"]}": {r["warning"]}'
            for r in found]
