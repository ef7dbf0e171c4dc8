"""Where an imported schedule meets a clock change differently than its old system did, said in
one note on the kind.

systemd (and, as far as its documentation says, launchd) reads wall time: a wall time that a
spring-forward gap removes never fires, and a wall time that a fall-back repeats fires at its
first pass only. tickq's documented rule (docs/explanation/daylight-saving.md): an `at` time
(or a cron string of one minute and one hour) follows the wall clock, so a time in a gap runs
one gap later and a repeated time runs once, at its second pass; an `every` cadence or any other
cron string runs on real time, so both passes of a repeated hour. The zone's changes are read
from Python's zone database only to decide whether to say so; no slot is computed here."""

from __future__ import annotations

import os
import zoneinfo
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from functools import cache

from tickq.legacy.schedule_terms import Event

DAY = 1440  # minutes
_SCAN_YEARS = 9  # changes looked for from last year on: every weekday a date can fall on
_STEP = timedelta(hours=1)


@dataclass(frozen=True)
class Window:
    """Wall minutes [low, high) of `day` that a clock change removes (gap) or repeats (fold)."""

    day: date
    low: int
    high: int
    kind: str


@cache
def change_windows(zone: str, year: int | None = None) -> tuple[Window, ...]:
    """The windows of the zone's clock changes in the years from `year` (default: last year)
    on; none for a zone without changes or one Python does not know."""
    try:
        tz = zoneinfo.ZoneInfo(zone)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError, OSError):
        return ()
    start = datetime(year or datetime.now(UTC).year - 1, 1, 1, tzinfo=UTC)
    found: list[Window] = []
    at, end = start, start.replace(year=start.year + _SCAN_YEARS)
    offset = at.astimezone(tz).utcoffset()
    while at < end:
        later = at + _STEP
        new = later.astimezone(tz).utcoffset()
        if new != offset and offset is not None and new is not None:
            found += _windows(_change_at(tz, at, later), offset, new)
        at, offset = later, new
    return tuple(found)


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


def _windows(change: datetime, old: timedelta, new: timedelta) -> list[Window]:
    """The wall minutes the change removes or repeats, split at midnight."""
    wall = change + old  # the wall clock just before the change, as a naive-UTC reading
    first = wall.hour * 60 + wall.minute
    length = int(abs((new - old).total_seconds()) // 60)
    low, high, kind = ((first, first + length, "gap") if new > old
                       else (first - length, first, "fold"))
    day = wall.date()
    if low < 0:
        spans = [(day - timedelta(days=1), low + DAY, DAY), (day, 0, high)]
    elif high > DAY:
        spans = [(day, low, DAY), (day + timedelta(days=1), 0, high - DAY)]
    else:
        spans = [(day, low, high)]
    return [Window(d, a, b, kind) for d, a, b in spans if a < b]


def clock_note(events: Sequence[Event], rule: str, zone: str, old: str) -> str | None:
    """The note for a kind of these events (rule "wall" or "real", as schedule_terms.Schedule
    says) in `zone`, when a clock change on one of their days meets one of their times and
    tickq treats it otherwise than `old` (systemd, launchd) did; None when none does."""
    hits = {w.kind for w in change_windows(zone) for e in events
            if any(w.low <= m < w.high for m in e.minutes) and e.matches(w.day)}
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
