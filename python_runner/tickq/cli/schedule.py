"""The `tickq next|schedule` commands: a kind's next slots, or any cron string's, as the database
computes them (tickq.schedule_slots), in the schedule's zone and in UTC."""

from __future__ import annotations

import argparse
import json
from datetime import UTC, datetime
from typing import Any

from tickq.cli import common
from tickq.db.api import schedule
from tickq.db.api.session import Row
from tickq.db.errors import EXIT_OK, NoAnswer


def cmd_next(args: argparse.Namespace) -> int:
    loaded = common.registry(args)
    kind = loaded.kinds.get(args.kind)
    if kind is None:
        raise NoAnswer(f"no kind {args.kind!r} in {loaded.path}")
    entry = {k: v for k, v in kind.to_sync_json().items()
             if k in ("every", "offset", "at", "on", "days", "months", "cron", "timezone")}
    with common.open_queue(args, loaded) as conn:
        found = schedule.schedule_slots(conn, kind.name, entry, loaded.settings.timezone,
                                        args.count, args.after)
    return _print(args, kind.name, found)


def cmd_schedule(args: argparse.Namespace) -> int:
    with common.open_queue(args) as conn:
        found = schedule.schedule_slots(conn, None, {"cron": args.expression,
                                                     "timezone": args.timezone},
                                        args.timezone, args.count, args.after)
    return _print(args, None, found)


def _slot(row: Row) -> dict[str, Any]:
    """One slot: `at` as ISO 8601 with its zone's offset, `utc` with Z, the zone."""
    at: datetime = row["at"].astimezone(UTC)
    local: datetime = row["local_at"]
    offset = local - at.replace(tzinfo=None)
    sign = "-" if offset.total_seconds() < 0 else "+"
    minutes = int(abs(offset.total_seconds())) // 60
    return {
        "at": f"{local.isoformat()}{sign}{minutes // 60:02d}:{minutes % 60:02d}",
        "utc": at.replace(tzinfo=None).isoformat() + "Z",
        "timezone": row["timezone"],
    }


def _print(args: argparse.Namespace, name: str | None, found: list[Row]) -> int:
    slots = [_slot(r) for r in found]
    if args.json:
        print(json.dumps(slots, indent=2))
        return EXIT_OK
    if found:
        print(f"{name}: {found[0]['schedule']}" if name else found[0]["schedule"])
    for slot in slots:
        print(f"{slot['at']}  {slot['utc']}")
    return EXIT_OK
