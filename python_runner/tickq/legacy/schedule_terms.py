"""What an old calendar schedule matches (`Event`: times of day, seconds, weekdays, days of the
month, months), shared by systemd's `OnCalendar=` and launchd's `StartCalendarInterval`, and
the tickq schedule keys that say exactly the same: `every`/`offset` for a cadence aligned to
the clock, `at` with `on`/`days`/`months` (which combine with AND, like systemd's fields), or a
five-field `cron` string (whose day of the month and weekday combine with OR, like launchd's).

Several events (several `OnCalendar=` lines, an array of calendar dictionaries) become one
schedule only when tickq can say their union exactly; else `Inexpressible` says why. Nothing
here computes a slot: the database's one calendar does that."""

from __future__ import annotations

import calendar
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import date
from typing import Any

from tickq.registry.durations import format_duration

DAY = 1440  # minutes
WEEKDAY_NAMES = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")  # ISO 1..7
MONTH_NAMES = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov",
               "dec")
AT_FEW = 6  # up to this many times a day read better as an `at` list than as a cron string
AT_MOST = 96  # more than this many `at` times is refused where no cron string can say it


class Inexpressible(ValueError):
    """The old schedule has no exact tickq schedule: the message (one line) says why."""


@dataclass(frozen=True)
class Event:
    """The instants an old calendar entry matches, in its zone's wall time."""

    minutes: frozenset[int]  # minutes of the day, 0..1439
    seconds: frozenset[int] = frozenset({0})  # seconds of the minute
    weekdays: frozenset[int] | None = None  # ISO 1 (Mon) .. 7 (Sun); None: any
    days: frozenset[int] | None = None  # 1..31, or -1..-31 counted from the month's end
    months: frozenset[int] | None = None  # 1..12
    either: bool = False  # with days and weekdays both given, a day matching either (cron OR)

    def filters(self) -> tuple[Any, ...]:
        return (self.weekdays, self.days, self.months, self.either)

    def matches(self, day: date) -> bool:
        """Whether `day` is one of its days (for deciding a note, never a slot)."""
        if self.months is not None and day.month not in self.months:
            return False
        length = calendar.monthrange(day.year, day.month)[1]
        in_days = self.days is None or bool({day.day, day.day - length - 1} & self.days)
        in_week = self.weekdays is None or day.isoweekday() in self.weekdays
        return (in_days or in_week) if self.either else (in_days and in_week)


def event(minutes: Iterable[int], seconds: Iterable[int] = (0,), *,
          weekdays: Iterable[int] | None = None, days: Iterable[int] | None = None,
          months: Iterable[int] | None = None, either: bool = False) -> Event:
    """An Event with every field that names all its values written as None (any)."""
    w = _all_is_none(weekdays, range(1, 8))
    d = _all_is_none(days, range(1, 32))
    if d is not None and frozenset(range(-31, 0)) <= d:
        d = None
    m = _all_is_none(months, range(1, 13))
    return Event(frozenset(minutes), frozenset(seconds), w, d, m,
                 either and w is not None and d is not None)


def _all_is_none(given: Iterable[int] | None, every: range) -> frozenset[int] | None:
    if given is None:
        return None
    found = frozenset(given)
    return None if found >= frozenset(every) else found


# ---------------------------------------------------------------- union


def union(events: Sequence[Event]) -> list[Event]:
    """`events` merged wherever one Event says exactly what two said."""
    merged = list(dict.fromkeys(events))
    changed = True
    while changed and len(merged) > 1:
        changed = False
        for i, a in enumerate(merged):
            for j in range(i + 1, len(merged)):
                both = _merged(a, merged[j])
                if both is not None:
                    merged[i] = both
                    del merged[j]
                    changed = True
                    break
            if changed:
                break
    return merged


def _merged(a: Event, b: Event) -> Event | None:
    if _covers(a, b):
        return a
    if _covers(b, a):
        return b
    if a.seconds != b.seconds:
        return None
    if a.filters() == b.filters():
        return replace(a, minutes=a.minutes | b.minutes)
    if a.minutes != b.minutes or a.either or b.either:
        return None
    differ = [n for n, (x, y) in enumerate(zip(a.filters()[:3], b.filters()[:3], strict=True))
              if x != y]
    if len(differ) != 1:
        return None
    fields = list(a.filters()[:3])
    x, y = a.filters()[differ[0]], b.filters()[differ[0]]
    fields[differ[0]] = None if x is None or y is None else x | y
    return event(a.minutes, a.seconds, weekdays=fields[0], days=fields[1], months=fields[2])


def _covers(a: Event, b: Event) -> bool:
    """Every instant of b is one of a (judged field by field, so never wrongly)."""
    if a.either or b.either:
        return a == b
    return (a.minutes >= b.minutes and a.seconds >= b.seconds
            and all(x is None or (y is not None and x >= y)
                    for x, y in zip(a.filters()[:3], b.filters()[:3], strict=True)))


# ---------------------------------------------------------------- one schedule


@dataclass(frozen=True)
class Schedule:
    keys: dict[str, Any]  # every/offset, or at with on/days/months, or cron
    rule: str  # how it meets a clock change: "real" (every instant) or "wall" (each time once)
    gap: int  # the shortest time between two slots, in seconds (a lower bound with filters)


def schedule_of(events: Sequence[Event], *, utc: bool) -> Schedule:
    """The one tickq schedule that matches exactly the instants of `events`. `utc`: their zone
    is UTC, so a cadence of any length lines up with tickq's clock-aligned `every`."""
    merged = union(events)
    if len(merged) > 1:
        raise Inexpressible(
            f"its {len(events)} calendar entries fire on different days at different times; "
            "one tickq schedule cannot hold their union (a tickq kind has one schedule)")
    e = merged[0]
    if e.seconds != frozenset({0}):
        return _seconds_cadence(e)
    cadence = _cadence(e)
    if cadence and (utc or 15 % cadence[0] == 0):  # every zone's offset is whole quarters
        every, first = cadence
        keys = {"every": format_duration(every * 60)}
        if first:
            keys["offset"] = format_duration(first * 60)
        return Schedule(keys, "real", every * 60)
    return _calendar(e)


def _seconds_cadence(e: Event) -> Schedule:
    """A cadence under a minute (`*:*:0/20`): only as `every`, on every minute of every day."""
    s = sorted(e.seconds)
    step = s[1] - s[0] if len(s) > 1 else 60
    if (e.minutes != frozenset(range(DAY)) or e.filters()[:3] != (None, None, None)
            or s != list(range(s[0], 60, step)) or 60 % step or s[0] >= step):
        raise Inexpressible(f"fires at second {','.join(map(str, s))} of a minute; tickq's "
                            "calendar times are whole minutes (only a cadence such as "
                            "every 20 seconds is kept)")
    keys = {"every": format_duration(step)}
    if s[0]:
        keys["offset"] = format_duration(s[0])
    return Schedule(keys, "real", step)


def _cadence(e: Event) -> tuple[int, int] | None:
    """(minutes between slots, the first slot's minute) when `e` fires every day at evenly
    spaced times that divide the day, under an hour apart or whole hours."""
    if e.filters()[:3] != (None, None, None) or len(e.minutes) < 2:
        return None
    m = sorted(e.minutes)
    step = m[1] - m[0]
    if DAY % step or m != list(range(m[0], DAY, step)) or m[0] >= step:
        return None
    return step, m[0]


def _calendar(e: Event) -> Schedule:
    """`at` with its filters, or a cron string, whichever says `e` (and reads better)."""
    cron = _cron(e)
    both = e.weekdays is not None and e.days is not None
    at_fits = not (both and e.either)
    if at_fits and (len(e.minutes) <= AT_FEW or cron is None):
        if len(e.minutes) > AT_MOST:
            raise Inexpressible(
                f"fires {len(e.minutes)} times a day on {_why_not_cron(e)}; tickq says that "
                f"only as an at list of {len(e.minutes)} times (at most {AT_MOST} are taken)")
        return Schedule(_at_keys(e), "wall", _gap(e.minutes))
    if cron is None:
        raise Inexpressible(f"no tickq schedule says it: {_why_not_cron(e)}")
    single = len({m // 60 for m in e.minutes}) == 1 and len({m % 60 for m in e.minutes}) == 1
    return Schedule({"cron": cron}, "wall" if single else "real", _gap(e.minutes))


def _why_not_cron(e: Event) -> str:
    if e.days is not None and min(e.days) < 0:
        return "days counted from the month's end, which a cron string has no field for"
    if e.weekdays is not None and e.days is not None and not e.either:
        return ("both certain days of the month and certain weekdays, which a cron string "
                "takes as either, not both")
    return "times of day that are not every hour of a list at every minute of a list"


def _gap(minutes: frozenset[int]) -> int:
    m = sorted(minutes)
    gaps = [b - a for a, b in zip(m, m[1:], strict=False)] + [DAY - m[-1] + m[0]]
    return min(gaps) * 60


# Days of the month that, beside weekdays, say "the nth weekday": 1-7 the first, -7..-1 the last.
_NTH = {frozenset(range(1, 8)): "1st", frozenset(range(8, 15)): "2nd",
        frozenset(range(15, 22)): "3rd", frozenset(range(22, 29)): "4th",
        frozenset(range(29, 32)): "5th", frozenset(range(-7, 0)): "last"}


def _at_keys(e: Event) -> dict[str, Any]:
    times = [f"{m // 60:02d}:{m % 60:02d}" for m in sorted(e.minutes)]
    keys: dict[str, Any] = {"at": times[0] if len(times) == 1 else times}
    nth = _NTH.get(e.days) if e.days is not None and e.weekdays is not None else None
    if e.weekdays is not None:
        prefix = f"{nth} " if nth else ""
        keys["on"] = [prefix + WEEKDAY_NAMES[d - 1] for d in sorted(e.weekdays)]
    if e.days is not None and nth is None:
        keys["days"] = sorted(e.days, key=lambda d: (d < 0, abs(d)))
    if e.months is not None:
        keys["months"] = [MONTH_NAMES[m - 1] for m in sorted(e.months)]
    return keys


def _cron(e: Event) -> str | None:
    """The five fields that match `e` exactly, or None when cron cannot say it."""
    hours = {m // 60 for m in e.minutes}
    minutes = {m % 60 for m in e.minutes}
    if len(hours) * len(minutes) != len(e.minutes):
        return None  # not every listed minute in every listed hour
    if e.days is not None and min(e.days) < 0:
        return None
    if e.weekdays is not None and e.days is not None and not e.either:
        return None
    dow = None if e.weekdays is None else {d % 7 for d in e.weekdays}
    return " ".join((cron_field(minutes, 0, 59), cron_field(hours, 0, 23),
                     cron_field(e.days, 1, 31), cron_field(e.months, 1, 12),
                     cron_field(dow, 0, 6)))


def cron_field(values: Iterable[int] | None, low: int, high: int) -> str:
    """A cron field for `values` within low..high: *, */k, a-b/k, or a list of a-b runs."""
    if values is None:
        return "*"
    v = sorted(set(values))
    if v == list(range(low, high + 1)):
        return "*"
    if len(v) > 2:
        step = v[1] - v[0]
        if step > 1 and v == list(range(v[0], v[-1] + 1, step)):
            if v[0] == low and v[-1] + step > high:
                return f"*/{step}"
            return f"{v[0]}-{v[-1]}/{step}"
    runs: list[str] = []
    start = prev = v[0]
    for n in [*v[1:], None]:
        if n is not None and n == prev + 1:
            prev = n
            continue
        runs.append(str(start) if start == prev else
                    f"{start},{prev}" if prev == start + 1 else f"{start}-{prev}")
        if n is not None:
            start = prev = n
    return ",".join(runs)
