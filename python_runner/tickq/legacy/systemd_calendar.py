"""systemd's calendar events (`OnCalendar=`), read as systemd.time(7) and systemd 252's
calendarspec.c read them: shorthands (`daily`, `weekly`, ...), weekday lists and ranges, dates
and times whose fields are `*`, lists, ranges `a..b` and repetitions `a/r` or `a..b/r`, `~` for
days counted from the month's end, optional seconds with fractions, a trailing time zone.

The result is a `CalendarEvent` (the fields as systemd holds them) that `to_event` turns into
the shared `schedule_terms.Event` of the values each field matches. What systemd itself would
refuse raises `CalendarError` with a one-line reason; so does what tickq cannot hold (a year)."""

from __future__ import annotations

import re
import zoneinfo
from dataclasses import dataclass

from tickq.legacy.schedule_terms import Event

USEC = 1_000_000
_SHORTHANDS = {
    "minutely": "*-*-* *:*:00", "hourly": "*-*-* *:00:00", "daily": "*-*-* 00:00:00",
    "monthly": "*-*-01 00:00:00", "weekly": "Mon *-*-* 00:00:00",
    "yearly": "*-01-01 00:00:00", "annually": "*-01-01 00:00:00", "anually": "*-01-01 00:00:00",
    "quarterly": "*-01,04,07,10-01 00:00:00", "semiannually": "*-01,07-01 00:00:00",
    "semi-annually": "*-01,07-01 00:00:00", "biannually": "*-01,07-01 00:00:00",
    "bi-annually": "*-01,07-01 00:00:00",
}  # fmt: skip
# Longest first, as systemd tries them (Monday before Mon).
_WEEKDAYS = (("monday", 1), ("mon", 1), ("tuesday", 2), ("tue", 2), ("wednesday", 3),
             ("wed", 3), ("thursday", 4), ("thu", 4), ("friday", 5), ("fri", 5),
             ("saturday", 6), ("sat", 6), ("sunday", 7), ("sun", 7))
_ZONE_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_+./-]*")
# (first, last) of each field, as calendar_spec_valid bounds them.
_BOUNDS = {"year": (1970, 2199), "month": (1, 12), "day": (1, 31), "hour": (0, 23),
           "minute": (0, 59), "second": (0, 60 * USEC - 1)}


class CalendarError(ValueError):
    """The expression is no calendar event systemd takes, or one tickq cannot hold: one line."""


@dataclass(frozen=True)
class Component:
    start: int
    stop: int = -1  # -1: no range
    repeat: int = 0  # 0: no repetition


Chain = tuple[Component, ...] | None  # None: "*"


@dataclass(frozen=True)
class CalendarEvent:
    weekdays: frozenset[int] | None  # ISO 1 (Mon) .. 7 (Sun); None: any day
    year: Chain
    month: Chain
    day: Chain
    hour: Chain
    minute: Chain
    second: Chain  # in microseconds
    end_of_month: bool  # "~": day values count from the month's end
    timezone: str | None  # "UTC" or an IANA name; None: the host's zone


def parse(text: str, host_abbreviations: frozenset[str] = frozenset()) -> CalendarEvent:
    """`text` read as systemd reads an `OnCalendar=` value. `host_abbreviations` are the host
    zone's own abbreviations (CET, CEST), which systemd reads as "daylight saving fixed"."""
    spec, zone = _split_zone(text.strip(), host_abbreviations)
    if not spec:
        raise CalendarError(f"{text.strip()!r} is no calendar event (nothing before the zone)")
    if spec.startswith("@"):
        raise CalendarError(f"{spec!r} is one instant (@seconds), not a schedule")
    spec = _SHORTHANDS.get(spec.lower(), spec)
    weekdays, rest = _weekdays(spec)
    (year, month, day, eom), rest = _date(rest)
    hour, minute, second = _time(rest)
    event = CalendarEvent(weekdays, _years(year), month, day if day else None, hour, minute,
                          second, eom and day is not None, zone)
    _check_valid(event)
    return event


def _split_zone(text: str, host_abbreviations: frozenset[str]) -> tuple[str, str | None]:
    """(the event, its zone): a trailing " UTC" (any case), or a last word naming a zone."""
    if text.lower().endswith(" utc"):
        return text[:-4], "UTC"
    head, space, last = text.rpartition(" ")
    if not space:
        return text, None
    if last.lower() in {a.lower() for a in host_abbreviations}:
        raise CalendarError(f"ends in {last}, the host zone's own abbreviation: systemd then "
                            "holds daylight saving on or off all year, which tickq cannot")
    if _ZONE_WORD.fullmatch(last) and last.lower() not in _SHORTHANDS and is_zone(last):
        return head, last
    return text, None


def is_zone(name: str) -> bool:
    """Whether Python's zone database knows `name` (as systemd's timezone_is_valid asks)."""
    if ".." in name or name.startswith("/"):
        return False
    try:
        zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError, OSError):
        return False
    return True


def _weekdays(text: str) -> tuple[frozenset[int] | None, str]:
    """The leading weekday list (Mon,Wed..Fri; "-" is an old spelling of ".."), and the rest."""
    days: set[int] = set()
    low, pos, first = -1, 0, True
    while True:
        found = next(((name, n) for name, n in _WEEKDAYS if text.lower().startswith(name, pos)),
                     None)
        if found is None:
            if first:
                return None, text
            raise CalendarError(f"{text!r}: a weekday list that ends in no weekday")
        name, n = found
        pos += len(name)
        if pos < len(text) and text[pos] not in "-., ":
            raise CalendarError(f"{text!r}: {text[pos - len(name):pos + 1]!r} is no weekday")
        days.add(n)
        if low >= 0:  # a range's end; it stays open until a "," (as systemd reads it)
            if low > n:
                raise CalendarError(f"{text!r}: a weekday range that runs backwards")
            days.update(range(low, n + 1))
        if pos == len(text) or text[pos] == " ":
            return _bits(days), text[pos:].lstrip(" ")
        if text.startswith("..", pos) or text[pos] == "-":
            if low >= 0 or text.startswith(".", pos) and not text.startswith("..", pos):
                raise CalendarError(f"{text!r}: a weekday range written wrong")
            low, pos = n, pos + (2 if text[pos] == "." else 1)
        elif text[pos] == ",":
            low, pos = -1, pos + 1
        else:
            raise CalendarError(f"{text!r}: a weekday range written wrong")
        if pos == len(text) or text[pos] == " ":
            if low >= 0:
                raise CalendarError(f"{text!r}: a weekday range with no end")
            return _bits(days), text[pos:].lstrip(" ")
        first = False


def _bits(days: set[int]) -> frozenset[int] | None:
    return None if len(days) == 7 else frozenset(days)


def _date(text: str) -> tuple[tuple[Chain, Chain, Chain, bool], str]:
    """((year, month, day, from the month's end), rest): "Y-M-D", "M-D", or none at all."""
    if not text:
        return (None, None, None, False), text
    first, pos = _chain(text, 0, False)
    if pos == len(text) or text[pos] == ":":
        return (None, None, None, False), text  # a time, not a date
    if text[pos] not in "-~":
        raise CalendarError(f"{text!r}: a date written wrong")
    eom = text[pos] == "~"
    second, pos = _chain(text, pos + 1, False)
    if pos == len(text) or text[pos] == " ":
        return (None, first, second, eom), text[pos:].lstrip(" ")
    if eom or text[pos] not in "-~":
        raise CalendarError(f"{text!r}: a date written wrong")
    eom = text[pos] == "~"
    third, pos = _chain(text, pos + 1, False)
    if pos < len(text) and text[pos] != " ":
        raise CalendarError(f"{text!r}: a date written wrong")
    return (first, second, third, eom), text[pos:].lstrip(" ")


def _time(text: str) -> tuple[Chain, Chain, Chain]:
    """(hour, minute, second) of "H:M[:S]"; none given is 00:00:00, no seconds :00."""
    zero = (Component(0),)
    if not text:
        return zero, zero, zero
    hour, pos = _chain(text, 0, False)
    if pos == len(text) or text[pos] != ":":
        raise CalendarError(f"{text!r}: a time written wrong (H:M or H:M:S)")
    minute, pos = _chain(text, pos + 1, False)
    if pos == len(text):
        return hour, minute, zero
    if text[pos] != ":":
        raise CalendarError(f"{text!r}: a time written wrong (H:M or H:M:S)")
    second, pos = _chain(text, pos + 1, True)
    if pos != len(text):
        raise CalendarError(f"{text!r}: a time written wrong (H:M or H:M:S)")
    return hour, minute, second


_NUMBER = re.compile(r"[0-9]+")
_FRACTION = re.compile(r"\.([0-9]+)")


def _chain(text: str, pos: int, usec: bool) -> tuple[Chain, int]:
    """A field at `pos`: "*" or components "a[..b][/r]" joined by ",", and where it ends."""
    if text.startswith("*", pos):
        return ((Component(0, -1, USEC),) if usec else None), pos + 1
    parts: list[Component] = []
    while True:
        start, pos = _number(text, pos, usec)
        stop, repeat = -1, 0
        if text.startswith("..", pos):
            stop, pos = _number(text, pos + 2, usec)
            repeat = USEC if usec else 1
        if text.startswith("/", pos):
            repeat, pos = _number(text, pos + 1, usec)
            if repeat == 0:
                raise CalendarError(f"{text!r}: a repetition of 0")
        if pos < len(text) and text[pos] not in " ,-~:":
            raise CalendarError(f"{text!r}: {text[pos]!r} where a field should end")
        if stop > start and repeat:
            stop -= (stop - start) % repeat  # systemd's normalize_chain, before its bounds
        if stop == start:
            stop, repeat = -1, 0  # "5..5", "3..5/4": the one value
        parts.append(Component(start, stop, repeat))
        if len(parts) > 240:
            raise CalendarError(f"{text[:40]!r}...: more than 240 values in one field")
        if not text.startswith(",", pos):
            return tuple(parts), pos
        pos += 1


def _number(text: str, pos: int, usec: bool) -> tuple[int, int]:
    match = _NUMBER.match(text, pos)
    if match is None:
        raise CalendarError(f"{text!r}: a number expected at {text[pos:pos + 10]!r}")
    value, pos = int(match.group()), match.end()
    if usec:
        value *= USEC
        fraction = _FRACTION.match(text, pos)
        if fraction and not text.startswith("..", pos):
            digits = fraction.group(1)
            value += int(digits[:6].ljust(6, "0")) + (len(digits) > 6 and digits[6] >= "5")
            pos = fraction.end()
    if value > 2**31 - 1:
        raise CalendarError(f"{text!r}: a number out of range")
    return value, pos


def _years(chain: Chain) -> Chain:
    """Two-digit years as systemd reads them: 12 is 2012, 89 is 1989."""
    def fix(n: int) -> int:
        return n + 2000 if 0 <= n < 70 else n + 1900 if 70 <= n < 100 else n
    if chain is None:
        return None
    return tuple(Component(fix(c.start), fix(c.stop) if c.stop >= 0 else -1, c.repeat)
                 for c in chain)


def _check_valid(event: CalendarEvent) -> None:
    """systemd's own bounds (calendar_spec_valid): a value out of its field, a repetition too
    long to repeat, a day more than 28 from the month's end."""
    for name in ("year", "month", "day", "hour", "minute", "second"):
        chain = getattr(event, name)
        low, high = _BOUNDS[name]
        eom = name == "day" and event.end_of_month
        if eom:
            high -= 3
        for c in chain or ():
            if not _component_valid(c, low, high, eom):
                raise CalendarError(f"a {name} value systemd refuses (out of {low}..{high}, "
                                    "or a repetition that cannot repeat)")


def _component_valid(c: Component, low: int, high: int, eom: bool) -> bool:
    if not low <= c.start <= high or c.repeat > high - low:
        return False
    if c.stop >= 0:
        return low <= c.stop <= high and c.start + c.repeat <= c.stop
    return c.start - c.repeat >= low if eom else c.start + c.repeat <= high


def values(chain: Chain, low: int, high: int) -> frozenset[int] | None:
    """The values a field matches within low..high (None: every one)."""
    if chain is None:
        return None
    found: set[int] = set()
    for c in chain:
        last = c.stop if c.stop >= 0 else (high if c.repeat else c.start)
        found.update(range(c.start, min(last, high) + 1, c.repeat or 1))
    return frozenset(found)


def _eom_days(chain: Chain) -> frozenset[int]:
    """Days counted from the month's end (-1 its last) of a "~" field: "~3/1" is the last
    three days, "~1..7/2" the 7th, 5th, 3rd and 1st last."""
    found: set[int] = set()
    for c in chain or ():
        if c.stop >= 0:
            found.update(range(-c.stop, -c.start + 1, c.repeat))
        elif c.repeat:
            found.update(range(-c.start, 0, c.repeat))
        else:
            found.add(-c.start)
    return frozenset(found)


def to_event(event: CalendarEvent) -> Event:
    """The values `event` matches, as the shared Event; CalendarError for a year restriction
    or a second that is not whole (tickq has neither)."""
    if event.year is not None:
        raise CalendarError("restricted to certain years; tickq's schedules have no year")
    seconds = values(event.second, 0, 60 * USEC - 1) or frozenset()
    if any(s % USEC for s in seconds):
        raise CalendarError("fires at fractions of a second; tickq's slots are whole seconds")
    hours = values(event.hour, 0, 23) or frozenset(range(24))
    minutes = values(event.minute, 0, 59) or frozenset(range(60))
    days = _eom_days(event.day) if event.end_of_month else values(event.day, 1, 31)
    return Event(minutes=frozenset(h * 60 + m for h in hours for m in minutes),
                 seconds=frozenset(s // USEC for s in seconds), weekdays=event.weekdays,
                 days=days, months=values(event.month, 1, 12))

