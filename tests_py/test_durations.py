"""durations.py: the registry's durations ("1h30m") read and written back, canonical both ways;
how short a duration may be is a bound of the database's, not syntax."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tickq.registry.durations import format_duration, parse_duration

# --- durations ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("30s", 30), ("5m", 300), ("1h30m", 5400), ("1d", 86400), ("2h", 7200), ("90m", 5400),
     ("1d2h3m4s", 93784), ("0h1m", 60)],
)  # fmt: skip
def test_parse_duration(text: str, seconds: int) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize(
    "text", ["", "5", "300", "m", "5 m", " 5m", "5M", "1m1h", "1h1h", "1.5h", "-5m", "5ms", "1w"]
)
def test_parse_duration_rejects(text: str) -> None:
    with pytest.raises(ValueError, match=r"duration"):
        parse_duration(text)


@pytest.mark.parametrize("text", ["0s", "0m", "0d0h0m0s"])
def test_parse_duration_leaves_zero_to_the_database(text: str) -> None:
    # How short a duration may be is a bound of tickq.registry_limits, not a matter of syntax.
    assert parse_duration(text) == 0


def test_format_duration_examples() -> None:
    assert format_duration(300) == "5m"
    assert format_duration(5400) == "1h30m"
    assert format_duration(86400 + 1) == "1d1s"
    with pytest.raises(ValueError):
        format_duration(0)


@given(st.integers(min_value=1, max_value=2**40))
def test_format_then_parse_round_trips(seconds: int) -> None:
    assert parse_duration(format_duration(seconds)) == seconds


@given(st.integers(0, 400), st.integers(0, 100), st.integers(0, 100), st.integers(0, 100))
def test_parse_then_format_is_canonical(d: int, h: int, m: int, s: int) -> None:
    text = "".join(f"{n}{unit}" for n, unit in zip((d, h, m, s), "dhms", strict=True) if n)
    if not text:
        return
    seconds = parse_duration(text)
    assert seconds == d * 86400 + h * 3600 + m * 60 + s
    canonical = format_duration(seconds)
    assert parse_duration(canonical) == seconds
    assert format_duration(parse_duration(canonical)) == canonical
