"""systemd's `OnCalendar=` syntax moved into tickq schedules (tickq.legacy.systemd_calendar,
schedule_terms, systemd_timing): each translation's slots, computed by the database's one
calendar, equal the elapses `systemd-analyze calendar` computes, over month ends and both clock
changes of a zone with daylight saving; where they differ the difference is a documented
clock-change rule, named, and the kind carries the note that says so."""

from __future__ import annotations

import pytest
from legacy_reference import check_against_systemd

from tickq.legacy.schedule_terms import Inexpressible
from tickq.legacy.systemd_calendar import CalendarError
from tickq.legacy.systemd_timing import translate

HAND = [
    (["minutely"], {"every": "1m"}),
    (["*:0/15"], {"every": "15m"}),
    (["*:05/15"], {"every": "15m", "offset": "5m"}),
    (["hourly"], {"cron": "0 * * * *"}),
    (["*-*-* *:30:00"], {"cron": "30 * * * *"}),
    (["daily"], {"at": "00:00"}),
    (["weekly"], {"at": "00:00", "on": ["mon"]}),
    (["monthly"], {"at": "00:00", "days": [1]}),
    (["yearly"], {"at": "00:00", "days": [1], "months": ["jan"]}),
    (["annually"], {"at": "00:00", "days": [1], "months": ["jan"]}),
    (["quarterly"], {"at": "00:00", "days": [1], "months": ["jan", "apr", "jul", "oct"]}),
    (["semiannually"], {"at": "00:00", "days": [1], "months": ["jan", "jul"]}),
    (["Mon..Fri 9..17:0/20"], {"cron": "*/20 9-17 * * 1-5"}),
    (["Sat,Sun 10:00"], {"at": "10:00", "on": ["sat", "sun"]}),
    (["Mon-Wed,Fri *-*-* 06:30:00"], {"at": "06:30", "on": ["mon", "tue", "wed", "fri"]}),
    (["*-*~01 23:30"], {"at": "23:30", "days": [-1]}),
    (["*-02~03"], {"at": "00:00", "days": [-3], "months": ["feb"]}),
    (["*-*~03/1 12:00"], {"at": "12:00", "days": [-1, -2, -3]}),
    (["Mon *-05~07/1"], {"at": "00:00", "on": ["last mon"], "months": ["may"]}),
    (["Fri *-*-1..7 08:00"], {"at": "08:00", "on": ["1st fri"]}),
    (["Fri *-*-13 13:13"], {"at": "13:13", "on": ["fri"], "days": [13]}),
    (["00/6:00"], {"at": ["00:00", "06:00", "12:00", "18:00"]}),
    (["*-*-* 06:00", "*-*-* 18:00"], {"at": ["06:00", "18:00"]}),
    (["Mon 06:00", "Tue 06:00"], {"at": "06:00", "on": ["mon", "tue"]}),
    (["*:0/7"], {"cron": "*/7 * * * *"}),
    (["*-*-1,15 04:00"], {"at": "04:00", "days": [1, 15]}),
    (["*-2/5-* 01:00"], {"at": "01:00", "months": ["feb", "jul", "dec"]}),
    (["*-*-* 02:30:00"], {"at": "02:30"}),
    (["*-*-* 01,02:30"], {"at": ["01:30", "02:30"]}),
    (["*:*:0/20"], {"every": "20s"}),
    (["daily UTC"], {"at": "00:00", "timezone": "UTC"}),
    (["*-*-* 03:00 America/New_York"], {"at": "03:00", "timezone": "America/New_York"}),
    (["hourly UTC"], {"every": "1h"}),
    (["00/6:00 UTC"], {"every": "6h"}),
]


@pytest.mark.parametrize(("expressions", "keys"), HAND, ids=[" | ".join(e) for e, _ in HAND])
def test_each_shape_becomes_the_schedule_that_says_it(expressions, keys):
    t = translate(expressions, "Europe/Berlin")
    zone = {} if "every" in keys else {"timezone": "Europe/Berlin"}
    assert t.keys == {**zone, **keys}


def test_slots_equal_systemd_elapses_but_for_named_clock_changes(conn):
    """Every hand expression, in a European and an American zone, against systemd itself."""
    explained = {}
    for expressions, _ in HAND:
        explained[("Europe/Berlin", *expressions)] = check_against_systemd(
            conn, expressions, "Europe/Berlin")
    for expressions in (["*:0/15"], ["hourly"], ["*-*-* 02:30:00"], ["*-*-* 01,02:30"],
                        ["*:0/7"], ["Sun 01:30"]):
        explained[("America/New_York", *expressions)] = check_against_systemd(
            conn, expressions, "America/New_York")
    # The known differences, named: a 02:30 in Berlin's spring gap runs one gap later...
    assert any("2027-03-28 02:30 does not exist" in line
               for line in explained[("Europe/Berlin", "*-*-* 02:30:00")])
    # ...a repeated 02:30 runs at its second pass, and a 15-minute cadence at both passes.
    assert any("second pass" in line for line in explained[("Europe/Berlin", "*-*-* 02:30:00")])
    assert any("second pass" in line for line in explained[("America/New_York", "*:0/15")])
    assert not explained[("Europe/Berlin", "daily")]


REFUSED = [
    ("*-*-* 12:00:30", "second 30 of a minute"),
    ("2027-*-* 12:00", "certain years"),
    ("*:*:1.5", "fractions of a second"),
    ("@1700000000", "one instant"),
    ("*-*-* 24:00", "systemd refuses"),
    ("*:*/15", "a time written wrong"),
    ("Mon..Tue..Wed", "weekday range"),
    ("*-*-31/3", "systemd refuses"),
    ("tomorrow", "a number expected"),
]


@pytest.mark.parametrize(("expression", "why"), REFUSED, ids=[e for e, _ in REFUSED])
def test_what_tickq_or_systemd_cannot_say_is_refused_in_one_line(expression, why):
    with pytest.raises((CalendarError, Inexpressible)) as e:
        translate([expression], "Europe/Berlin")
    assert why in str(e.value) and "\n" not in str(e.value)


def test_a_union_tickq_cannot_say_is_refused_and_zones_must_agree():
    with pytest.raises(Inexpressible, match="different days at different times"):
        translate(["Sat,Sun 10:00", "Mon..Fri 07:00"], "Europe/Berlin")
    with pytest.raises(Inexpressible, match="different time zones"):
        translate(["daily UTC", "daily"], "Europe/Berlin")


def test_the_host_zone_is_named_in_a_note_and_its_abbreviation_refused():
    t = translate(["daily"], "Europe/Berlin")
    assert "systemd read it in the host's time zone, Europe/Berlin" in t.notes
    unknown = translate(["daily"], None)
    assert "timezone" not in unknown.keys and "not known here" in unknown.notes[0]
    with pytest.raises(CalendarError, match="abbreviation"):
        translate(["*-*-* 03:00 CEST"], "Europe/Berlin")
