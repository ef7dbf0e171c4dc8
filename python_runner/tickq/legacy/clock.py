"""The clock an old cron ran by: the machine's time zone, and where its clock-change rule and
tickq's differ for a schedule.

Debian's cron (cron(8)) runs an entry with no `*` opening its minute or hour field by the wall
clock across a change of less than three hours: a time the spring-forward gap skips runs right
after the change, a time the fall-back repeats runs once (its first occurrence); any other entry
runs by real time. tickq (docs/explanation/daylight-saving.md) runs a single time of day (an `at`, a
cron string of single numbers) one gap later and at the second occurrence, any other cron
string by real time. This module says, for one schedule in one zone, whether the two can
differ in the coming years, in a note that names the rule."""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from functools import cache
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from tickq.legacy.clock_changes import host_zone as file_zone
from tickq.legacy.cron import CronSchedule

_UTC_NAMES = frozenset(("UTC", "Etc/UTC", "Etc/UCT", "UCT", "Etc/Universal", "Universal",
                        "Etc/Zulu", "Zulu", "Etc/GMT", "GMT", "Etc/GMT0", "GMT0"))
YEARS = 3  # how far ahead the zone's changes are looked at


def canonical(zone: str) -> str:
    return "UTC" if zone in _UTC_NAMES else zone


def valid_zone(name: str) -> bool:
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return False
    return True


def host_zone() -> str:
    """The zone this machine's old scheduler ran by, for every reader (cron's, systemd's,
    launchd's): $TZ when it names a zone (to import another machine's files: `TZ=Europe/Paris
    tickq legacy import ...`), else /etc/localtime's or /etc/timezone's, else UTC."""
    named = os.environ.get("TZ", "").removeprefix(":")
    if named and valid_zone(named):
        return canonical(named)
    return canonical(file_zone() or "UTC")


@cache
def changes(zone: str, start_year: int) -> tuple[tuple[datetime, int], ...]:
    """Each clock change of `zone` in YEARS years from `start_year`: (the instant, UTC; the
    change in seconds, positive forward)."""
    tz = ZoneInfo(zone)
    found = []
    at = datetime(start_year, 1, 1, tzinfo=UTC)
    end = datetime(start_year + YEARS, 1, 1, tzinfo=UTC)
    while at < end:
        step = at + timedelta(hours=6)
        before, after = at.astimezone(tz).utcoffset(), step.astimezone(tz).utcoffset()
        if before != after:
            # The first second of the new offset (a change falls on a whole second).
            low, high = int(at.timestamp()), int(step.timestamp())
            while high - low > 1:
                middle = (low + high) // 2
                if datetime.fromtimestamp(middle, tz).utcoffset() == before:
                    low = middle
                else:
                    high = middle
            found.append((datetime.fromtimestamp(high, UTC), int((after - before).total_seconds())))
        at = step
    return tuple(found)


def _touched(times: tuple[int, ...], wall_start: datetime, seconds: int) -> bool:
    """Whether a time of the day in `times` (minutes) falls in the `seconds` of wall clock from
    `wall_start` (a gap or a repeat)."""
    start = wall_start.hour * 60 + wall_start.minute
    return any((t - start) % 1440 * 60 < seconds for t in times)


def clock_note(schedule: CronSchedule, zone: str, year: int | None = None) -> str | None:
    """A note saying how tickq and Debian's cron run `schedule` differently across `zone`'s
    clock changes, or None when they run it alike there."""
    if not schedule.fixed:
        return None  # both run it by real time
    year = year or datetime.now(UTC).year
    tz = ZoneInfo(zone)
    forward = backward = False
    for instant, delta in changes(zone, year):
        # The wall clock the change skips (forward) or repeats (backward) starts at the wall
        # time of the change as the clock read before it (forward) or after it (backward).
        before = (instant - timedelta(seconds=1)).astimezone(tz) + timedelta(seconds=1)
        wall = before.replace(tzinfo=None) if delta > 0 else \
            instant.astimezone(tz).replace(tzinfo=None)
        if _touched(schedule.times, wall, abs(delta)):
            forward, backward = forward or delta > 0, backward or delta < 0
    if not forward and not backward:
        return None
    if schedule.single:
        ours = ("one gap later" if forward else "", "at its second occurrence" if backward else "")
    else:
        ours = ("not at all" if forward else "", "at both occurrences (real time: the "
                "schedule is a list, range or step)" if backward else "")
    said = []
    if forward:
        said.append(f"a time the spring-forward gap skips runs {ours[0]} in tickq, right "
                    "after the change in Debian's cron")
    if backward:
        said.append(f"a time the fall-back repeats runs {ours[1]} in tickq, once at its first "
                    "occurrence in Debian's cron")
    return f"clock changes in {zone}: " + "; ".join(said)
