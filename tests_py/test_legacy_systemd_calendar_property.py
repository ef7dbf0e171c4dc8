"""Generated `OnCalendar=` expressions against systemd itself: what `systemd-analyze calendar`
refuses the reader refuses; what it takes either becomes a schedule whose slots (the database's
calendar) are systemd's elapses but for named, noted differences, or is refused in one line for
a reason tickq states (a year, a second that is not :00, a union it cannot say). Arbitrary text
never raises anything else."""

from __future__ import annotations

import subprocess
from datetime import UTC, datetime

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from legacy_reference import (
    compare,
    has_note,
    slots_until,
    systemd_analyze,
    systemd_elapses,
    window_end,
)

from tickq.legacy.schedule_terms import Inexpressible
from tickq.legacy.systemd_calendar import CalendarError
from tickq.legacy.systemd_timing import translate

HOST = "Europe/Berlin"
BASES = [datetime(2027, 3, 27, tzinfo=UTC), datetime(2027, 10, 30, tzinfo=UTC),
         datetime(2027, 12, 30, 12, tzinfo=UTC), datetime(2028, 2, 27, 12, tzinfo=UTC)]
COUNT = 150
NAMES = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
# Why the reader may refuse what systemd takes: each is a thing tickq has no way to say.
TICKQ_LIMITS = ("certain years", "of a minute", "fractions of a second", "at list of",
                "no tickq schedule says it")


def component(low: int, high: int) -> st.SearchStrategy[str]:
    number = st.integers(low, high + 2).map(lambda n: f"{n:02d}" if n < 10 and n % 2 else str(n))
    step = st.integers(1, max(2, high // 2)).map(str)
    return st.one_of(
        number,
        st.tuples(number, number).map(lambda p: f"{p[0]}..{p[1]}"),
        st.tuples(number, step).map(lambda p: f"{p[0]}/{p[1]}"),
        st.tuples(number, number, step).map(lambda p: f"{p[0]}..{p[1]}/{p[2]}"),
    )


def field(low: int, high: int) -> st.SearchStrategy[str]:
    return st.one_of(st.just("*"), st.lists(component(low, high), min_size=1, max_size=3)
                     .map(",".join))


weekdays = st.one_of(
    st.just(""),
    st.lists(st.sampled_from(NAMES), min_size=1, max_size=3).map(lambda d: ",".join(d) + " "),
    st.tuples(st.sampled_from(NAMES), st.sampled_from(NAMES)).map(lambda p: f"{p[0]}..{p[1]} "),
)
date = st.one_of(
    st.just(""),
    st.tuples(field(1, 12), field(1, 31)).map(lambda p: f"*-{p[0]}-{p[1]} "),
    st.tuples(field(1, 12), field(1, 28)).map(lambda p: f"*-{p[0]}~{p[1]} "),
    st.tuples(field(2025, 2030), field(1, 12), field(1, 31)).map(lambda p: "-".join(p) + " "),
)
time = st.one_of(
    st.tuples(field(0, 23), field(0, 59)).map(":".join),
    st.tuples(field(0, 23), field(0, 59), st.sampled_from(["00", "0/20", "30", "*"]))
    .map(":".join),
)
zone = st.sampled_from(["", " UTC", " America/New_York", ""])
shorthand = st.sampled_from(["minutely", "hourly", "daily", "weekly", "monthly", "yearly",
                             "quarterly", "semiannually", "annually"])
expressions = st.one_of(
    st.tuples(weekdays, date, time, zone).map(lambda p: ("".join(p[:3]) + p[3]).strip()),
    st.tuples(shorthand, zone).map("".join),
)


def systemd_takes(expression: str) -> bool:
    result = subprocess.run([systemd_analyze(), "calendar", expression], capture_output=True,
                            text=True, env={"TZ": HOST, "LANG": "C", "SYSTEMD_COLORS": "0"},
                            timeout=30, check=False)
    return result.returncode == 0


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(expression=expressions, base=st.sampled_from(BASES))
def test_generated_expressions_agree_with_systemd(conn, expression, base):
    if not systemd_takes(expression):
        try:
            translate([expression], HOST)
        except CalendarError:
            return
        raise AssertionError(f"systemd refuses {expression!r}, the reader took it")
    try:
        t = translate([expression], HOST)
    except (CalendarError, Inexpressible) as e:
        assert any(why in str(e) for why in TICKQ_LIMITS), f"{expression!r}: {e}"
        assert "\n" not in str(e)
        return
    old = systemd_elapses([expression], base, COUNT, HOST)
    until = window_end(old, base, COUNT)
    ours = slots_until(conn, t.keys, base, until, len([s for s in old[0] if s < until]) + 60)
    for d in compare(old[0], ours, t.keys.get("timezone", HOST), "systemd", until):
        assert d.why, f"{expression!r} as {t.keys}: {d.line()}"
        assert has_note(t.notes, d), f"{expression!r} as {t.keys}: no note for {d.line()}"


@settings(max_examples=300, deadline=None)
@given(text=st.text(max_size=60) | expressions.map(lambda e: e[: len(e) // 2]))
def test_arbitrary_text_is_a_schedule_or_a_one_line_refusal(text):
    try:
        translate([text], HOST)
    except (CalendarError, Inexpressible) as e:
        assert "\n" not in str(e) and str(e)
