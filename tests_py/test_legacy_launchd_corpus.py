"""Real launchd property lists from public repositories (tests_py/data/legacy/launchd/, their
sources in its SOURCE file), read as tickq imports them: each becomes the schedule, or the
refusal, written here by hand from launchd.plist(5); each StartCalendarInterval gives the slots
cronsim gives for the same fields as crontab lines (launchd.plist(5): "The semantics are
similar to crontab(5)"; a missing key is "*"), computed independently from the raw plist; each
StartInterval the clock-aligned cadence tickq documents; several commands are written by hand."""

from __future__ import annotations

import plistlib
import re
import zoneinfo
from datetime import UTC, datetime
from pathlib import Path

import pytest
from cronsim import CronSim
from legacy_reference import tickq_slots

from tickq.legacy.launchd import LAUNCHD_PATH, read_plist
from tickq.legacy.oldjob import OldJob, Refusal

CORPUS = Path(__file__).parent / "data" / "legacy" / "launchd"
HOST = "Asia/Tokyo"  # no clock changes: the comparison is about the calendar itself
PLISTS = sorted(p.name for p in CORPUS.glob("*.plist"))
SELVAN_ENV = {"PATH": "/opt/homebrew/bin:/usr/local/bin:/usr/bin:/bin:/sbin:/usr/sbin",
              "HOME": "/Users/arul"}

EXPECTED = {
    "com.selvansoft.clamav-scan.plist": {"at": "02:01", "on": ["mon"], "timezone": HOST},
    "com.selvansoft.clamav-update.plist": {"at": "05:01", "on": ["tue", "wed", "thu", "fri"],
                                           "timezone": HOST},
    # the file's comment says 12:01am; Hour 12 is noon, and launchd runs it at noon
    "com.selvansoft.locate-updatedb.plist": {"at": "12:01", "timezone": HOST},
    "com.selvansoft.purge.plist": {"at": ["06:01", "18:01"], "timezone": HOST},
    "com.selvansoft.test.plist": {"every": "2m"},
    "com.googlecode.munki.managedsoftwareupdate-check.plist": {"every": "1h"},
    "tobbe.check-web.plist": {"every": "1m40s"},
    "net.selvans.network_change.plist": "not a property list",  # its DOCTYPE line is broken
    "com.googlecode.munki.managedsoftwareupdate-manualcheck.plist":
        "no schedule: launchd starts it and kept it running",
    "local.test.plist": "no schedule: launchd starts it and kept it running",
}


def read(name: str) -> OldJob | Refusal:
    [found] = read_plist(CORPUS / name, HOST)
    return found


def test_the_corpus_names_its_sources():
    source = (CORPUS / "SOURCE").read_text()
    for name in PLISTS:
        block = source.split(f"\n{name}\n", 1)[1].split("\n\n", 1)[0]
        assert re.search(r"repository: https://github.com/\S+", block), name
        assert re.search(r"commit: [0-9a-f]{40}", block) and "licence: " in block, name
    assert sorted(EXPECTED) == PLISTS
    assert sum(isinstance(v, dict) for v in EXPECTED.values()) >= 5


@pytest.mark.parametrize("name", PLISTS)
def test_each_plist_becomes_its_schedule_or_its_refusal(name):
    expected, found = EXPECTED[name], read(name)
    if isinstance(expected, str):
        assert isinstance(found, Refusal) and found.reason.startswith(expected), found
        assert "\n" not in found.line()
    else:
        assert isinstance(found, OldJob), found
        assert dict(found.schedule) == expected
        assert found.legacy == plistlib.loads((CORPUS / name).read_bytes())["Label"]


def _cron_lines(calendar: dict | list) -> list[str]:
    """Each calendar dictionary as the crontab line of the same fields."""
    entries = calendar if isinstance(calendar, list) else [calendar]
    return [" ".join(str(e.get(k, "*")) for k in ("Minute", "Hour", "Day", "Month", "Weekday"))
            for e in entries]


@pytest.mark.parametrize("base", [datetime(2027, 1, 27, tzinfo=UTC),
                                  datetime(2028, 2, 25, tzinfo=UTC)])
def test_calendar_intervals_give_crons_slots(conn, base):
    tz = zoneinfo.ZoneInfo(HOST)
    compared = 0
    for name in PLISTS:
        found = read(name)
        if not isinstance(found, OldJob) or "every" in found.schedule:
            continue
        raw = plistlib.loads((CORPUS / name).read_bytes())["StartCalendarInterval"]
        reference: set[datetime] = set()
        for line in _cron_lines(raw):
            it = CronSim(line, base.astimezone(tz))
            reference |= {next(it).astimezone(UTC) for _ in range(40)}
        until = sorted(reference)[29]
        ours = tickq_slots(conn, found.schedule, base, 40)
        assert [t for t in ours if t <= until] == sorted(t for t in reference if t <= until), name
        compared += 1
    assert compared >= 4


def test_start_interval_is_the_clock_aligned_cadence(conn):
    base = datetime(2027, 5, 4, 10, 7, 13, tzinfo=UTC)
    for name, seconds in (("com.selvansoft.test.plist", 120), ("tobbe.check-web.plist", 100),
                          ("com.googlecode.munki.managedsoftwareupdate-check.plist", 3600)):
        found = read(name)
        first = (int(base.timestamp()) // seconds + 1) * seconds
        expected = [datetime.fromtimestamp(first + n * seconds, UTC) for n in range(5)]
        assert tickq_slots(conn, found.schedule, base, 5) == expected, name
        assert any("counted from when it loaded" in n for n in found.notes)


def test_commands_as_launchd_runs_them():
    """ProgramArguments is the argv, run in / unless WorkingDirectory says otherwise, with
    EnvironmentVariables over launchd's own PATH."""
    scan = read("com.selvansoft.clamav-scan.plist").steps[0]
    assert scan.argv == ("/opt/homebrew/opt/aselvan-scripts/security/clamscan.sh", "-m",
                         "replace_this_with_email")
    assert scan.cwd == "/" and scan.env == {
        **SELVAN_ENV, "SCRIPTS_GITHUB": "/opt/homebrew/opt/aselvan-scripts"}
    purge = read("com.selvansoft.purge.plist").steps[0]
    assert purge.argv == ("/usr/sbin/purge",) and purge.env == {"PATH": LAUNCHD_PATH}
    web = read("tobbe.check-web.plist").steps[0]
    assert web.argv == ("/Users/tobbe/.nvm/versions/node/v10.12.0/bin/node", "index.js")
    assert web.cwd == "/Users/tobbe/Dev/check-web/"
    test = read("com.selvansoft.test.plist")
    assert test.steps[0].argv == ("/bin/bash", "-c", 'echo "com.selvansoft.test run at $(date)"')
    assert any(n.startswith("RunAtLoad") for n in test.notes)


def test_a_clock_change_on_the_jobs_day_is_noted():
    """In Los Angeles, 02:01 on Sundays meets the spring-forward gap; on Mondays it never
    does (the change is on a Sunday)."""
    sunday = plistlib.dumps({"Label": "x", "ProgramArguments": ["/bin/true"],
                             "StartCalendarInterval": {"Weekday": 0, "Hour": 2, "Minute": 1}})
    [job] = read_plist(CORPUS / "com.selvansoft.clamav-scan.plist", "America/Los_Angeles")
    assert not any("clock changes" in n for n in job.notes)
    found = _read_bytes(sunday, "America/Los_Angeles")
    assert any("spring-forward" in n for n in found.notes)


def _read_bytes(data: bytes, zone: str) -> OldJob:
    [found] = read_plist(Path("x.plist"), zone, read=lambda _: data)
    assert isinstance(found, OldJob)
    return found

