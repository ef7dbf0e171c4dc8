"""A crontab entry's schedule, as a tickq schedule: a cadence (`every`) or times of day (`at`)
on weekdays (`on`) where those say it, else the entry's own five fields as a `cron` string
(days of the month, months, names, steps such as `*/7`, `@monthly`, `@yearly`), which the
database computes by cron's rules; `@reboot` is untranslatable. The fields are read here only
to refuse what cron itself would (a value out of its range), never to compute a slot."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from tickq.legacy.words import Untranslatable

_CRON_FIELD = re.compile(r"[0-9*][0-9A-Za-z*,/-]*|[A-Za-z]{3}[A-Za-z0-9,/-]*")
_WEEKDAYS = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")  # cron numbers them 0-6 (7 = sun)
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_SPECIAL = {"@hourly": {"every": 3600}, "@daily": {"at": ("00:00",)},
            "@midnight": {"at": ("00:00",)}, "@weekly": {"at": ("00:00",), "on": ("sun",)},
            "@monthly": {"cron": "@monthly"}, "@yearly": {"cron": "@yearly"},
            "@annually": {"cron": "@annually"}}


def read_entry(text: str) -> tuple[dict[str, Any], list[str], str] | None:
    """(the schedule as Translation's every/at/on, notes, the command) when `text` is a crontab
    entry, else None."""
    entry = _split_entry(text)
    if entry is None:
        return None
    fields, command = entry
    schedule, notes = _schedule(fields)
    if re.search(r"(?<!\\)%", command):
        raise Untranslatable("an unescaped % in a crontab command (cron turns it into a "
                             "newline and feeds the rest to stdin)")
    return schedule, notes, command


def _split_entry(text: str) -> tuple[list[str], str] | None:
    """(the schedule fields, the command) when `text` is a crontab entry."""
    stripped = text.lstrip()
    if stripped.startswith("@"):
        word, _, rest = stripped.partition(" ")
        return ([word], rest.strip()) if rest.strip() else None
    parts = stripped.split(None, 5)
    if (len(parts) == 6 and all(_CRON_FIELD.fullmatch(f) for f in parts[:5])
            and (parts[0][0].isdigit() or parts[0][0] == "*")):
        return parts[:5], parts[5]
    return None


def _schedule(fields: list[str]) -> tuple[dict[str, Any], list[str]]:
    notes = ["cron ran it in the host's local time zone: check the registry's timezone"]
    if len(fields) == 1:
        if fields[0] in _SPECIAL:
            return dict(_SPECIAL[fields[0]]), ([] if fields[0] == "@hourly" else notes)
        raise Untranslatable(f"{fields[0]} has no tickq schedule (it runs once when cron "
                             "starts; tickq runs on a schedule only)")
    minute, hour, dom, month, dow = fields
    minutes = _values(minute, 0, 59, "minute")
    hours = _values(hour, 0, 23, "hour")
    _values(dom, 1, 31, "day of month")
    _values(month, 1, 12, "month", ("", *_MONTHS))
    days = sorted({d % 7 for d in _values(dow, 0, 7, "day of week", _WEEKDAYS)})
    as_cron = {"cron": " ".join(fields)}
    if dom != "*" or month != "*":
        return as_cron, notes
    if dow == "*":
        if hour == "*" and (minute == "*" or re.fullmatch(r"\*/\d+", minute)):
            step = 1 if minute == "*" else int(minute[2:])
            # */7 restarts at every hour (:56, then :00): no fixed cadence, but cron's own rule.
            return ({"every": step * 60}, []) if 60 % step == 0 else (as_cron, [])
        if hour == "*" and minutes == [0]:
            return {"every": 3600}, []
    times = tuple(f"{h:02d}:{m:02d}" for h in hours for m in minutes)
    schedule: dict[str, Any] = {"at": times}
    if len(days) < 7:
        # tickq lists weekdays Monday first.
        schedule["on"] = tuple(_WEEKDAYS[d] for d in [1, 2, 3, 4, 5, 6, 0] if d in days)
    return schedule, notes


def _values(text: str, low: int, high: int, what: str, names: Sequence[str] = ()) -> list[int]:
    def number(word: str) -> int:
        lowered = word.lower()
        if lowered in names:
            return names.index(lowered)
        if not word.isdigit() or not low <= int(word) <= high:
            raise Untranslatable(f'{what} "{word}" is not a number from {low} to {high}')
        return int(word)

    values: set[int] = set()
    for part in text.split(","):
        body, _, step_text = part.partition("/")
        step = int(step_text) if step_text.isdigit() and int(step_text) > 0 else None
        if step_text and step is None:
            raise Untranslatable(f'{what} step "{step_text}" is not a positive number')
        if body == "*":
            start, end = low, high
        elif "-" in body:
            a, _, b = body.partition("-")
            start, end = number(a), number(b)
        else:
            start = end = number(body)
            if step:
                end = high
        if start > end:
            raise Untranslatable(f'{what} range "{body}" runs backwards')
        values.update(range(start, end + 1, step or 1))
    return sorted(values)
