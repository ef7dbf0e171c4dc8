"""A systemd timer's `[Timer]` section as tickq schedule keys: its `OnCalendar=` events in one
schedule (systemd_calendar reads each, schedule_terms finds the schedule), in their zone or the
host's, with a note wherever tickq would run it otherwise than systemd did."""

from __future__ import annotations

import zoneinfo
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from tickq.legacy.clock_changes import clock_note
from tickq.legacy.schedule_terms import Inexpressible, Schedule, schedule_of
from tickq.legacy.systemd_calendar import (
    USEC,
    CalendarEvent,
    Chain,
    is_zone,
    parse,
    to_event,
    values,
)

UTC_NAMES = frozenset(("UTC", "Etc/UTC", "Etc/UCT", "UCT", "Etc/Universal", "Universal",
                       "Etc/Zulu", "Zulu", "GMT", "Etc/GMT", "Etc/GMT0", "GMT0", "Etc/GMT+0",
                       "Etc/GMT-0", "Etc/Greenwich", "Greenwich"))


@dataclass(frozen=True)
class Translated:
    keys: dict[str, object]  # the registry's schedule keys, timezone included when known
    notes: tuple[str, ...]
    schedule: Schedule


def translate(expressions: Sequence[str], host_zone: str | None) -> Translated:
    """One tickq schedule for a timer's `OnCalendar=` values, read in `host_zone` when they
    name no zone (None: the host's zone is not known). Raises CalendarError or Inexpressible
    with the reason."""
    events = [parse(text, host_abbreviations(host_zone)) for text in expressions]
    zones = {e.timezone or host_zone for e in events}
    if len(zones) > 1:
        named = ", ".join(sorted(z or "the host's" for z in zones))
        raise Inexpressible(f"its calendar events name different time zones ({named}); a "
                            "tickq kind has one")
    zone = zones.pop()
    zone = "UTC" if zone in UTC_NAMES else zone
    schedule = schedule_of([to_event(e) for e in events], utc=zone == "UTC")
    keys = dict(schedule.keys)
    notes = []
    if "every" not in keys:  # a cadence is aligned to the clock, the same in every zone
        if zone is None:
            notes.append("systemd read it in the host's time zone, which is not known here: "
                         "the registry's timezone applies; set timezone if they differ")
        else:
            keys["timezone"] = zone
            if all(e.timezone is None for e in events):
                notes.append(f"systemd read it in the host's time zone, {zone}")
    if zone is not None:
        clock = clock_note([to_event(e) for e in events], schedule.rule, zone, "systemd")
        if clock:
            notes.append(clock)
    skipped = sorted({period for e in events for period in wrap_skips(e)})
    if skipped:
        notes.append(f"systemd 252 misses the first slot of a new {' or '.join(skipped)} after "
                     "a repetition wraps past it (23:56 + 7 minutes becomes 00:03, so 00:00 "
                     "never fires); tickq runs that slot")
    return Translated(keys, tuple(notes), schedule)


def host_abbreviations(zone: str | None) -> frozenset[str]:
    """The abbreviations a zone's clocks show in January and July (CET, CEST): systemd takes a
    trailing one as "the host's zone with daylight saving fixed"."""
    if zone is None or not is_zone(zone):
        return frozenset()
    tz = zoneinfo.ZoneInfo(zone)
    year = datetime.now(UTC).year
    return frozenset(filter(None, (datetime(year, month, 1, tzinfo=tz).tzname()
                                   for month in (1, 7))))


def wrap_skips(cal: CalendarEvent) -> list[str]:
    """The periods (hour, day, month, year) whose first slot systemd 252 misses: a repetition
    without an end (`*:0/7`) that runs past its field's end is carried into the field above,
    and when that carries on (23:56 + 7 minutes is 00:03 of the next day) systemd resets only
    the field just below the one that changed, so the new day starts at 00:03 and 00:00 is
    never reached. tickq runs that slot."""
    hours = values(cal.hour, 0, 23)
    minutes = values(cal.minute, 0, 59)
    days = values(cal.day, 1, 31) if not cal.end_of_month else None
    months = values(cal.month, 1, 12)
    checks = (
        (cal.second, 0, 60 * USEC - 1, _has(minutes, 59, 0), "hour"),
        (cal.minute, 0, 59, _has(hours, 23, 0), "day"),
        (cal.hour, 0, 23, days is None or 1 in days and bool(days & {28, 29, 30, 31}), "month"),
        (None if cal.end_of_month else cal.day, 1, 31, _has(months, 12, 1), "year"),
    )
    return [period for chain, low, high, carries, period in checks
            if carries and _misses_first(chain, low, high)]


def _has(found: frozenset[int] | None, *wanted: int) -> bool:
    return found is None or all(w in found for w in wanted)


def _misses_first(chain: Chain, low: int, high: int) -> bool:
    """Whether the field's repetition, run past `high`, lands beyond its first value in the
    next period (December's 31 days stand for the year's end)."""
    matched = values(chain, low, high)
    if not matched or chain is None:
        return False
    after = max(matched) + 1  # where systemd's search resumes after the last slot
    wraps = [c.start + c.repeat * -(-(after - c.start) // c.repeat)
             for c in chain if c.stop < 0 and c.repeat]
    if not wraps or min(wraps) <= high:
        return False
    landed = min(wraps) - (high + 1) + low
    return any(v < landed for v in matched)
