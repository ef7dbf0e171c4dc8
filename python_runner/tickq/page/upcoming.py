"""What `tickq upcoming` and the page's Upcoming table say beside a run: why a kind is held (the
database decides which are, in tickq.upcoming_at) and how many runs the list left out."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any


def held_note(row: dict[str, Any], when: Callable[[datetime | None], str]) -> str:
    """Why this row's kind will not run on its schedule, with what would change it ("" for a
    run that will happen as listed). `when` formats a time in the reader's zone."""
    if row["held"] == "unarmed":
        return (f"unarmed: never run by its schedule until a person runs it once "
                f"(tickq run {row['kind']})")
    if row["held"] == "paused" and row["due_at"] is None:
        return f"paused until resumed (tickq resume {row['kind']})"
    if row["held"] == "paused":
        return f"paused until {when(row['paused_until'])}: the runs it missed run as one then"
    return ""


def left_out(rows: Sequence[dict[str, Any]]) -> int:
    """How many runs in the window the list does not show (every row carries the total)."""
    if not rows:
        return 0
    listed = sum(1 for r in rows if r["due_at"] is not None)
    return max(0, int(rows[0]["total"]) - listed)
