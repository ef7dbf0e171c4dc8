"""The values of command-line options: argparse types that turn a word into a value or say, in
one line, what is wrong with it (exit 2). Rules on registry values are the database's: these
only read a word's form (a duration, a number, an ISO time)."""

from __future__ import annotations

import argparse
from datetime import UTC, datetime

from tickq.registry.durations import parse_duration


def duration(text: str) -> int:
    try:
        return parse_duration(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def hours(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"hours must be a number, got {text!r}") from None
    if not 0 < value <= 24 * 90:
        raise argparse.ArgumentTypeError(f"hours must be more than 0 and at most 2160, got {text}")
    return value


def count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number, got {text!r}") from None
    if not 1 <= value <= 10_000:
        raise argparse.ArgumentTypeError(f"must be from 1 to 10000, got {text}")
    return value


def instant(text: str) -> datetime:
    try:
        value = datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"must be an ISO 8601 time like 2026-03-01T00:00:00Z, got {text!r}") from None
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


def positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number, got {text!r}") from None
    if not 1 <= value <= 100_000:
        raise argparse.ArgumentTypeError(f"must be from 1 to 100000, got {text}")
    return value


def agent_id(text: str) -> int:
    if not text.isdigit() or int(text) <= 0 or int(text) > 2**63 - 1:
        raise argparse.ArgumentTypeError(f"an agent id is a positive whole number, got {text!r}")
    return int(text)


def times(text: str) -> list[str]:
    return [t.strip() for t in text.split(",") if t.strip()]
