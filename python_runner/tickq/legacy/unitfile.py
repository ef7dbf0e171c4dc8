"""systemd's unit-file syntax (systemd.syntax(7)) as systemd's config parser reads it: sections,
`Key=value` lines with the whitespace around `=` dropped, `#` and `;` comment lines, a trailing
backslash joining the next line (with a space, and skipping comment lines in between), keys
repeated in order. What a repeated or empty assignment means is each setting's own business
(`values` keeps the list an empty assignment resets). Also systemd's time spans (`5min 20s`,
`infinity`), which timers and services share."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

LINE_MAX = 1 << 20  # systemd's LONG_LINE_MAX
_COMMENTS = ("#", ";")
_WHITESPACE = " \t\n\r"


class UnitSyntax(ValueError):
    """A unit file systemd would not load: one line, naming the line."""


@dataclass(frozen=True)
class Assignment:
    section: str
    key: str
    value: str
    line: int  # where the assignment starts


def read_unit(text: str) -> list[Assignment]:
    """Every assignment of `text`, in order."""
    found: list[Assignment] = []
    section = ""
    for number, line in _logical_lines(text):
        if len(line) > LINE_MAX:
            raise UnitSyntax(f"line {number}: longer than systemd reads (1 MiB)")
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1]
            continue
        if line.startswith("["):
            raise UnitSyntax(f"line {number}: a section header without its ']'")
        key, equals, value = line.partition("=")
        if not equals or not section:
            continue  # systemd warns ("Missing '='", "Assignment outside of section") and goes on
        found.append(Assignment(section, key.strip(_WHITESPACE), value.strip(_WHITESPACE),
                                number))
    return found


def _logical_lines(text: str) -> list[tuple[int, str]]:
    """(first line number, the joined line, stripped) of every line that is not empty and not
    a comment; a line ending in an unescaped backslash continues on the next line that is not
    a comment, the backslash replaced by a space."""
    lines: list[tuple[int, str]] = []
    pending: tuple[int, str] | None = None
    for number, raw in enumerate(text.split("\n"), start=1):
        if number == 1:
            raw = raw.removeprefix("\ufeff")
        if raw.lstrip(_WHITESPACE).startswith(_COMMENTS):
            continue  # also inside a continuation: the comment block is skipped
        start, joined = pending if pending else (number, "")
        joined += raw
        if _continues(joined):
            pending = (start, joined[:-1] + " ")
            continue
        pending = None
        if joined.strip(_WHITESPACE):
            lines.append((start, joined.strip(_WHITESPACE)))
    if pending and pending[1].strip(_WHITESPACE):
        lines.append((pending[0], pending[1].strip(_WHITESPACE)))
    return lines


def _continues(line: str) -> bool:
    """Whether `line` ends in a backslash that is not itself escaped."""
    tail = len(line) - len(line.rstrip("\\"))
    return tail % 2 == 1


def values(assignments: Sequence[Assignment], section: str, key: str) -> list[Assignment]:
    """The assignments of a list setting as systemd keeps them: in order, each empty one
    dropping those before it."""
    kept: list[Assignment] = []
    for a in assignments:
        if a.section == section and a.key == key:
            kept = [] if a.value == "" else [*kept, a]
    return kept


def last(assignments: Sequence[Assignment], section: str, key: str) -> Assignment | None:
    """The assignment of a single-valued setting that counts: the last one."""
    found = [a for a in assignments if a.section == section and a.key == key]
    return found[-1] if found else None


# ---------------------------------------------------------------- time spans and booleans

_UNITS = (("usec", 1e-6), ("us", 1e-6), ("μs", 1e-6), ("µs", 1e-6), ("msec", 1e-3),
          ("ms", 1e-3), ("seconds", 1), ("second", 1), ("sec", 1), ("s", 1), ("minutes", 60),
          ("minute", 60), ("min", 60), ("months", 2_629_800), ("month", 2_629_800),
          ("M", 2_629_800), ("m", 60), ("hours", 3600), ("hour", 3600), ("hr", 3600),
          ("h", 3600), ("days", 86_400), ("day", 86_400), ("d", 86_400), ("weeks", 604_800),
          ("week", 604_800), ("w", 604_800), ("years", 31_557_600), ("year", 31_557_600),
          ("y", 31_557_600))
_SPAN_PART = re.compile(r"\s*([0-9]+(?:\.[0-9]*)?|\.[0-9]+)\s*([A-Za-zμµ]*)")


def timespan(text: str) -> float | None:
    """Seconds in a systemd time span ("5min 20s", "1.5h", "90": seconds); None for
    "infinity". ValueError for anything else."""
    text = text.strip()
    if text == "infinity":
        return None
    if not text:
        raise ValueError("an empty time span")
    total, pos = 0.0, 0
    while pos < len(text):
        match = _SPAN_PART.match(text, pos)
        if match is None:
            raise ValueError(f"{text!r} is no time span")
        unit = match.group(2)
        size = dict(_UNITS).get(unit) if unit else 1
        if size is None:
            raise ValueError(f"{text!r}: unknown time unit {unit!r}")
        total += float(match.group(1)) * size
        pos = match.end()
    return total


_TRUE = frozenset(("1", "yes", "y", "true", "t", "on"))
_FALSE = frozenset(("0", "no", "n", "false", "f", "off"))


def boolean(text: str) -> bool:
    """systemd's booleans (yes/no, true/false, on/off, 1/0); ValueError for anything else."""
    low = text.strip().lower()
    if low in _TRUE:
        return True
    if low in _FALSE:
        return False
    raise ValueError(f"{text!r} is no boolean")
