"""Where an imported schedule meets a clock change differently than its old system did, said in
one note on the kind.

systemd (and, as far as its documentation says, launchd) reads wall time: a wall time that a
spring-forward gap removes never fires, and a wall time that a fall-back repeats fires at its
first pass only. tickq's documented rule (README, "Calendars and cron strings"): an `at` time
(or a cron string of one minute and one hour) follows the wall clock, so a time in a gap runs
one gap later and a repeated time runs once, at its second pass; an `every` cadence or any other
cron string runs on real time, so both passes of a repeated hour. The zone's changes are read
from Python's zone database only to decide whether to say so; no slot is computed here."""

from __future__ import annotations

import os
import zoneinfo
from datetime import UTC, datetime, timedelta
from functools import cache

DAY = 1440  # minutes
_SCAN_YEARS = 3  # changes looked for from the start of this year on
_STEP = timedelta(hours=1)


@cache
def change_windows(zone: str, year: int | None = None) -> list[tuple[int, int, str]]:
    """(first minute, end minute, "gap" or "fold") of the wall times of a day that the zone's
    clock changes remove (gap) or repeat (fold) in the years from `year` (default: this one)
    on; [] for a zone without changes or one Python does not know."""
    try:
        tz = zoneinfo.ZoneInfo(zone)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError, OSError):
        return []
    start = datetime(year or datetime.now(UTC).year, 1, 1, tzinfo=UTC)
    found: set[tuple[int, int, str]] = set()
    at, end = start, start.replace(year=start.year + _SCAN_YEARS)
    offset = at.astimezone(tz).utcoffset()
    while at < end:
        later = at + _STEP
        new = later.astimezone(tz).utcoffset()
        if new != offset and offset is not None and new is not None:
            found.update(_window(_change_at(tz, at, later), offset, new))
        at, offset = later, new
    return sorted(found)


def _change_at(tz: zoneinfo.ZoneInfo, before: datetime, after: datetime) -> datetime:
    """The instant (to the minute) between `before` and `after` where the offset changes."""
    old = before.astimezone(tz).utcoffset()
    while after - before > timedelta(minutes=1):
        middle = before + (after - before) / 2
        middle = middle.replace(second=0, microsecond=0)
        if middle.astimezone(tz).utcoffset() == old:
            before = middle
        else:
            after = middle
    return after


def _window(change: datetime, old: timedelta, new: timedelta) -> list[tuple[int, int, str]]:
    """The wall minutes of a day the change removes or repeats, split at midnight."""
    wall = change + old  # the wall clock just before the change, as a naive-UTC reading
    first = wall.hour * 60 + wall.minute
    length = int(abs((new - old).total_seconds()) // 60)
    low, high, kind = ((first, first + length, "gap") if new > old
                       else (first - length, first, "fold"))
    if low < 0:
        spans = [(low + DAY, DAY), (0, high)]
    elif high > DAY:
        spans = [(low, DAY), (0, high - DAY)]
    else:
        spans = [(low, high)]
    return [(a, b, kind) for a, b in spans if a < b]


def clock_note(minutes: frozenset[int], rule: str, zone: str, old: str) -> str | None:
    """The note for a kind of times of day `minutes` (rule "wall" or "real", as
    schedule_terms.Schedule says) in `zone`, when a clock change treats them otherwise than
    `old` (systemd, launchd) did; None when none does."""
    windows = change_windows(zone)
    hits = {kind for low, high, kind in windows for m in minutes if low <= m < high}
    if rule == "wall":
        parts = []
        if "gap" in hits:
            parts.append(f"a time a spring-forward change skips runs one gap later here, where "
                         f"{old} skipped it")
        if "fold" in hits:
            parts.append(f"a time a fall-back change repeats runs once at its second pass here, "
                         f"where {old} ran the first")
        if not parts:
            return None
        return f"clock changes in {zone}: " + "; ".join(parts)
    if "fold" in hits:
        return (f"clock changes in {zone}: in the hour a fall-back change repeats this kind runs "
                f"at both passes, where {old} ran only the first")
    return None


def host_zone(localtime: str = "/etc/localtime", timezone: str = "/etc/timezone") -> str | None:
    """This machine's IANA zone, as the link /etc/localtime names it (Linux, macOS) or as
    /etc/timezone says (Debian); None when neither tells."""
    try:
        target = os.readlink(localtime)
    except OSError:
        target = ""
    if "zoneinfo/" in target:
        name = target.split("zoneinfo/", 1)[1]
        if _known(name):
            return name
    try:
        with open(timezone, encoding="utf-8") as f:
            name = f.read(200).strip()
    except (OSError, UnicodeDecodeError):
        return None
    return name if _known(name) else None


def _known(name: str) -> bool:
    try:
        zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError, OSError):
        return False
    return True
