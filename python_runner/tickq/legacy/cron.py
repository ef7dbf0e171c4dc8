"""A crontab entry's schedule as registry keys, and what cron itself refuses.

One time a day (a single minute and hour) on every day or on some weekdays becomes `at` (with
`on`): tickq runs it by the same wall-clock rule as a cron string of single numbers. Anything
else stays the entry's own five fields (or its `@word`) as a `cron` string, which the database
computes by cron's rules: lists, ranges and steps included (`0,5,...,55 * * * *` is one string,
not 288 times). The fields are read here only to refuse what Debian's cron refuses (a value out
of its range, day of the month 0, a step of 0) and to know the shortest gap between two slots,
never to compute a slot."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tickq.legacy.words import Untranslatable

_WEEKDAYS = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")  # cron numbers them 0-6 (7 = sun)
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
# (name, lowest, highest, names): the ranges Debian's cron (3.0pl1) accepts; it drops the whole
# file for one value outside them (day of the month 0 included).
_FIELDS = (("minute", 0, 59, ()), ("hour", 0, 23, ()), ("day of month", 1, 31, ()),
           ("month", 1, 12, ("", *_MONTHS)), ("day of week", 0, 7, _WEEKDAYS))
# The @words Debian's cron knows, as five fields; @reboot is no schedule.
SPECIAL = {"@yearly": "0 0 1 1 *", "@annually": "0 0 1 1 *", "@monthly": "0 0 1 * *",
           "@weekly": "0 0 * * 0", "@daily": "0 0 * * *", "@midnight": "0 0 * * *",
           "@hourly": "0 * * * *"}
# The @words tickq's own cron strings take (@midnight is written as @daily's `at`).
_KEPT = ("@yearly", "@annually", "@monthly", "@hourly")
FIELD_WORD = re.compile(r"[0-9A-Za-z*,/-]+")


@dataclass(frozen=True)
class CronSchedule:
    keys: dict[str, Any]  # the registry keys: {"cron": ...} or {"at": [...], "on": [...]}
    gap: int  # the shortest time in seconds between two slots (two times of one day)
    times: tuple[int, ...]  # the minutes of the day it runs at, sorted
    single: bool  # one minute and one hour: tickq follows the wall clock across clock changes
    fixed: bool  # no `*` opens the minute or hour field: Debian's cron runs it by the wall
    # clock across a change of less than three hours (cron(8)), any other entry by real time


def read_schedule(fields: Sequence[str]) -> CronSchedule:
    """The schedule of an entry's five fields (or one @word); raise Untranslatable with what
    cron would say of a field it refuses."""
    if len(fields) == 1:
        word = fields[0].lower()
        if word == "@reboot":
            raise Untranslatable("@reboot runs once when cron starts; tickq runs on a schedule "
                                 "only (run it from the machine's start-up instead)")
        if word not in SPECIAL:
            raise Untranslatable(f"{fields[0]} is no schedule cron knows")
        schedule = read_schedule(SPECIAL[word].split())
        if word in _KEPT:
            return CronSchedule({"cron": word}, schedule.gap, schedule.times, schedule.single,
                                word != "@hourly")
        return schedule
    values = [_values(text, *field) for text, field in zip(fields, _FIELDS, strict=True)]
    minutes, hours, _, _, weekdays = values
    times = tuple(sorted(h * 60 + m for h in hours for m in minutes))
    single = len(minutes) == 1 and len(hours) == 1 and not set(fields[0] + fields[1]) & set("*,-/")
    fixed = not fields[0].startswith("*") and not fields[1].startswith("*")
    return CronSchedule(_keys(fields, single, weekdays), _gap(times), times, single, fixed)


def _keys(fields: Sequence[str], single: bool, weekdays: list[int]) -> dict[str, Any]:
    minute, hour, dom, month, dow = fields
    if not single or dom != "*" or month != "*":
        return {"cron": " ".join(fields)}
    keys: dict[str, Any] = {"at": [f"{int(hour):02d}:{int(minute):02d}"]}
    days = {d % 7 for d in weekdays}
    if dow != "*" and len(days) < 7:
        # tickq lists weekdays Monday first.
        keys["on"] = [_WEEKDAYS[d] for d in (1, 2, 3, 4, 5, 6, 0) if d in days]
    return keys


def _gap(times: tuple[int, ...]) -> int:
    """The shortest gap in seconds between two of `times` (minutes of a day), counting the one
    from the last of a day to the first of the next; a day when it runs once."""
    if len(times) == 1:
        return 86400
    steps = [b - a for a, b in zip(times, times[1:], strict=False)]
    return 60 * min(*steps, times[0] + 1440 - times[-1])


def _values(text: str, what: str, low: int, high: int, names: Sequence[str]) -> list[int]:
    """The numbers a field names, as Debian's cron reads it; Untranslatable for a field it
    refuses."""
    if not FIELD_WORD.fullmatch(text):
        raise Untranslatable(f'{what} "{text}" is not a cron field')
    values: set[int] = set()
    for part in text.split(","):
        body, slash, step_text = part.partition("/")
        if slash and not (step_text.isdigit() and int(step_text) > 0):
            raise Untranslatable(f'{what} step "{step_text}" is not a number above 0')
        if body == "*":
            start, end = low, high
        elif "-" in body:
            first, _, last = body.partition("-")
            start, end = _number(first, what, low, high, names), _number(last, what, low, high,
                                                                         names)
        else:
            if slash:
                raise Untranslatable(f'{what} "{part}": cron takes a step only after * or a '
                                     "range")
            start = end = _number(body, what, low, high, names)
        if start > end:
            raise Untranslatable(f'{what} range "{body}" runs backwards')
        values.update(range(start, end + 1, int(step_text) if slash else 1))
    return sorted(values)


def _number(word: str, what: str, low: int, high: int, names: Sequence[str]) -> int:
    lowered = word.lower()
    if lowered and lowered in names:
        return names.index(lowered)
    if not word.isdigit() or not low <= int(word) <= high:
        raise Untranslatable(f'{what} "{word}" is not a number from {low} to {high}'
                             + (" (cron refuses day 0)" if what == "day of month" and word.isdigit()
                                and int(word) == 0 else ""))
    return int(word)
