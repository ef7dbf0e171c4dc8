"""launchd property lists read into the job tickq imports (tickq.legacy.launchd), with the
expected values written by hand from launchd.plist(5): StartCalendarInterval's wildcards,
Weekday 0 and 7, a Day and a Weekday firing on either (launchd's calendarinterval_setalarm takes
the earlier of the two), StartInterval, Program versus ProgramArguments."""

from __future__ import annotations

import plistlib
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tickq.legacy import launchd
from tickq.legacy.launchd import LAUNCHD_PATH, read_plist
from tickq.legacy.oldjob import OldJob, Refusal

ZONE = "Asia/Tokyo"


def plist(tmp_path: Path, data: dict[str, Any], binary: bool = False) -> Path:
    path = tmp_path / f"{data.get('Label', 'x')}.plist"
    fmt = plistlib.FMT_BINARY if binary else plistlib.FMT_XML
    path.write_bytes(plistlib.dumps(data, fmt=fmt))
    return path


def job(path: Path) -> OldJob:
    [found] = read_plist(path, ZONE)
    assert isinstance(found, OldJob), found
    return found


def refused(path: Path) -> str:
    [found] = read_plist(path, ZONE)
    assert isinstance(found, Refusal), found
    assert "\n" not in found.line()
    return found.reason


def agent(**keys: Any) -> dict[str, Any]:
    return {"Label": "com.example.job", "ProgramArguments": ["/usr/local/bin/job", "--now"],
            **keys}


@pytest.mark.parametrize(("calendar", "schedule"), [
    ({"Hour": 3, "Minute": 15}, {"at": "03:15"}),
    ({"Hour": 3}, {"cron": "* 3 * * *"}),  # every minute of hour 3, as launchd runs it
    ({"Minute": 30}, {"cron": "30 * * * *"}),
    ({}, {"every": "1m"}),
    ({"Weekday": 0, "Hour": 9, "Minute": 0}, {"at": "09:00", "on": ["sun"]}),
    ({"Weekday": 7, "Hour": 9, "Minute": 0}, {"at": "09:00", "on": ["sun"]}),
    ({"Day": 1, "Hour": 0, "Minute": 0}, {"at": "00:00", "days": [1]}),
    ({"Month": 2, "Day": 14, "Hour": 8, "Minute": 0},
     {"at": "08:00", "days": [14], "months": ["feb"]}),
    ({"Day": 13, "Weekday": 5, "Hour": 0, "Minute": 0}, {"cron": "0 0 13 * 5"}),
    ([{"Hour": 9, "Minute": 0, "Weekday": d} for d in range(1, 6)],
     {"at": "09:00", "on": ["mon", "tue", "wed", "thu", "fri"]}),
    ([{"Hour": 6, "Minute": 0}, {"Hour": 18, "Minute": 0}], {"at": ["06:00", "18:00"]}),
    ([{"Minute": m} for m in (0, 15, 30, 45)], {"every": "15m"}),
])
def test_start_calendar_interval(tmp_path, calendar, schedule):
    j = job(plist(tmp_path, agent(StartCalendarInterval=calendar)))
    zone = {} if "every" in schedule else {"timezone": ZONE}
    assert j.schedule == {**schedule, **zone}


def test_start_interval_program_and_environment(tmp_path):
    j = job(plist(tmp_path, agent(StartInterval=300, WorkingDirectory="/srv",
                                  EnvironmentVariables={"MODE": "fast"}), binary=True))
    assert j.schedule == {"every": "5m"}
    assert any("counted from when it loaded" in n for n in j.notes)
    [step] = j.steps
    assert step.argv == ("/usr/local/bin/job", "--now") and step.cwd == "/srv"
    assert step.env == {"PATH": LAUNCHD_PATH, "MODE": "fast"}
    only = job(plist(tmp_path, {"Label": "a", "Program": "/bin/true", "StartInterval": 60}))
    assert only.steps[0].argv == ("/bin/true",) and only.steps[0].cwd == "/"
    both = job(plist(tmp_path, {"Label": "b", "Program": "/bin/sh",
                                "ProgramArguments": ["sh", "-c", "date"], "StartInterval": 60}))
    assert both.steps[0].argv == ("/bin/sh", "-c", "date")
    assert any("argv[0] 'sh'" in n for n in both.notes)


def test_what_launchd_does_beside_the_schedule_is_noted(tmp_path):
    j = job(plist(tmp_path, agent(StartInterval=3600, RunAtLoad=True, KeepAlive={
        "SuccessfulExit": False}, StandardOutPath="/tmp/out.log", UserName="ops", Disabled=True,
        Nice=10)))
    text = " | ".join(j.notes)
    for word in ("RunAtLoad", "KeepAlive", "/tmp/out.log", "ran it as ops", "Disabled",
                 "not imported: Nice"):
        assert word in text
    assert j.user == "ops" and j.legacy == "com.example.job"


@pytest.mark.parametrize(("data", "why"), [
    (agent(KeepAlive=True), "no schedule: launchd starts it and kept it running"),
    (agent(RunAtLoad=True), "no schedule: launchd starts it at load"),
    (agent(WatchPaths=["/tmp/in"]), "when a watched path changed"),
    (agent(), "no schedule"),
    (agent(StartInterval=60, StartCalendarInterval={"Hour": 1}), "both"),
    (agent(StartCalendarInterval={"Hour": 24}), "Hour must be a whole number from 0 to 23"),
    (agent(StartCalendarInterval={"Hours": 2}), "unknown key"),
    (agent(StartCalendarInterval=[]), "empty array"),
    (agent(StartInterval=0), "StartInterval"),
    ({"ProgramArguments": ["/bin/a"], "StartInterval": 60}, "no Label"),
    ({"Label": "x", "StartInterval": 60}, "nothing to run"),
    (agent(StartInterval=60, EnableGlobbing=True, ProgramArguments=["/bin/ls", "*.log"]),
     "EnableGlobbing"),
    (agent(StartCalendarInterval=[{"Hour": 1, "Minute": 0, "Weekday": 1},
                                  {"Hour": 2, "Minute": 0, "Weekday": 2}]), "union"),
])
def test_refusals_name_the_reason(tmp_path, data, why):
    assert why in refused(plist(tmp_path, data))


def test_a_file_that_is_no_property_list_is_one_refusal(tmp_path):
    path = tmp_path / "broken.plist"
    path.write_text("<plist><dict><key>Label</key>")
    assert refused(path).startswith("not a property list")
    path.write_bytes(plistlib.dumps(["not", "a", "dict"]))
    assert "top is not a dictionary" in refused(path)


@settings(max_examples=300, deadline=None)
@given(data=st.binary(max_size=200) | st.recursive(
    st.none() | st.booleans() | st.integers(-2, 70) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
        st.sampled_from(["Label", "Program", "ProgramArguments", "StartInterval",
                         "StartCalendarInterval", "Hour", "Minute", "Weekday", "Day",
                         "KeepAlive", "EnvironmentVariables", "WorkingDirectory"]),
        inner, max_size=4), max_leaves=12))
def test_arbitrary_input_is_a_job_or_a_one_line_refusal(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("p") / "x.plist"
    if isinstance(data, bytes):
        path.write_bytes(data)
    else:
        try:
            path.write_bytes(plistlib.dumps(data if isinstance(data, dict) else {"x": data},
                                            fmt=plistlib.FMT_BINARY))
        except (TypeError, OverflowError, ValueError):
            return
    [found] = read_plist(path, ZONE)
    if isinstance(found, Refusal):
        assert found.reason and "\n" not in found.line()


def test_the_import_table_reader_reads_bytes_itself(tmp_path):
    """`legacy import` hands its readers the file's text; a binary plist has none, so the
    launchd reader reads the file's bytes itself."""
    path = plist(tmp_path, agent(StartInterval=60), binary=True)
    [found] = launchd.read(path, "")
    assert isinstance(found, OldJob) and found.schedule == {"every": "1m"}
