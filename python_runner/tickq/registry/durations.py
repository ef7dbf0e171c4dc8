"""Durations as people write them in the registry ("30s", "5m", "1h30m", "1d") and back."""

from __future__ import annotations

import re
from datetime import timedelta

# Units d h m s, each at most once and in that order; at least one must be present.
_DURATION = re.compile(r"(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?")
_UNITS = (("d", 86_400), ("h", 3_600), ("m", 60), ("s", 1))


def parse_duration(text: str) -> int:
    """Return the whole seconds in `text`; raise ValueError, with a message fit for a person,
    when it is not a duration."""
    if not isinstance(text, str):
        raise ValueError(f'duration must be a string like "5m" or "1h30m", got {text!r}')
    match = _DURATION.fullmatch(text)
    if not text or match is None:
        if text.isdigit():
            raise ValueError(f'duration needs a unit (d, h, m, s): write "{text}s", got "{text}"')
        raise ValueError(
            f'duration must look like "30s", "5m", "1h30m" or "1d" '
            f'(units d h m s, each once, in that order), got "{text}"'
        )
    # How long a duration may be is a value rule the database owns (tickq.registry_limits):
    # "0s" parses, and the sync refuses it naming the bound.
    return sum(int(value) * size for value, (_, size) in zip(match.groups(), _UNITS) if value)


def format_duration(seconds: int) -> str:
    """The shortest registry spelling of `seconds`: 300 -> "5m", 5400 -> "1h30m"."""
    if seconds <= 0:
        raise ValueError(f"duration must be > 0, got {seconds}")
    parts = []
    for unit, size in _UNITS:
        count, seconds = divmod(seconds, size)
        if count:
            parts.append(f"{count}{unit}")
    return "".join(parts)


def human_duration(value: timedelta | float | None, *, tenths: bool = True) -> str:
    """A measured duration for people: the registry's spelling of its whole seconds; under a
    second "0.4s" (or "0s" without `tenths`); "-" for none."""
    if value is None:
        return "-"
    seconds = value.total_seconds() if isinstance(value, timedelta) else float(value)
    if seconds >= 1:
        return format_duration(int(seconds))
    return f"{seconds:.1f}s" if tenths else "0s"


def coarse_duration(seconds: float) -> str:
    """Two units at most, and no seconds past a minute: 45s, 3m, 1h20m, 2d3h (how far a time
    is from now, like systemctl list-timers)."""
    whole = int(seconds)
    if whole < 60:
        return f"{whole}s"
    if whole < 3_600:
        return f"{whole // 60}m"
    size, small = (86_400, 3_600) if whole >= 86_400 else (3_600, 60)
    return format_duration(whole // size * size + whole % size // small * small)
