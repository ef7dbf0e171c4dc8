"""Real timer/service pairs from public repositories (tests_py/data/legacy/systemd/*/, each with
a SOURCE file naming repository, path, commit and licence), read as tickq imports them:
- each becomes the schedule, or the refusal, written here by hand from systemd.timer(5);
- every OnCalendar= of the corpus gives the slots systemd-analyze calendar gives (over both clock
  changes of Europe/Berlin and a leap February's end), but for named, noted differences;
- the commands of several are the argv, cwd and environment written by hand from
  systemd.service(5) and systemd.exec(5);
- `systemd-analyze verify` loads every unit, so each parses as systemd parses it."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from legacy_reference import check_against_systemd, systemd_analyze

from tickq.legacy.oldjob import OldJob, Refusal
from tickq.legacy.systemd import read_timer_unit
from tickq.legacy.systemd_env import SYSTEM_PATH

CORPUS = Path(__file__).parent / "data" / "legacy" / "systemd"
HOST = "Europe/Berlin"
TIMERS = sorted(p.relative_to(CORPUS).as_posix() for p in CORPUS.rglob("*.timer"))

SCHEDULES = {
    "apt-daily/apt-daily.timer": {"at": ["06:00", "18:00"], "timezone": HOST},
    # "6:00,18:00" is hour 6 at minutes 0 and 18: systemd's reading, kept
    "apt-daily-2016/apt-daily.timer": {"at": ["06:00", "06:18"], "timezone": HOST},
    "apt-daily-upgrade/apt-daily-upgrade.timer": {"at": "06:00", "timezone": HOST},
    "logrotate/logrotate.timer": {"at": "00:00", "timezone": HOST},
    "snapper-timeline/timeline.timer": {"cron": "0 * * * *", "timezone": HOST},
    "snapper-backup/backup.timer": {"cron": "0 * * * *", "timezone": HOST},
    "snapper-cleanup/cleanup.timer": {"every": "1h"},
    "snapper-boot/boot.timer": "it fires only once, 1s after boot (OnBootSec=)",
    "cli-backup/systemd/user/backup.homedir.timer": {
        "at": "06:00", "on": ["mon", "tue", "wed", "thu", "fri"], "timezone": HOST},
    "cloudflare-ddns/cloudflare-ddns.timer": {"every": "5m", "offset": "12s"},
    "brep-clean/brep-clean.timer": {"every": "5m"},
    "brep-load/brep-load.timer": {"every": "5m"},
    "brep-monitor/brep-monitor.timer": {"every": "1h"},
    "brep-load-private/brep-load.timer": {"every": "4s"},
    "pg-dump/pg_dump@.timer": "a template: systemd runs it only as instances",
    "pg-dump/pg_dump@15-main.timer": {"at": "00:00", "on": ["mon"], "timezone": HOST,
                                      "catch_up": "1h"},
    "pg-compresswal/pg_compresswal@.timer": "a template: systemd runs it only as instances",
    "pg-compresswal/pg_compresswal@15-main.timer": {"at": "00:00", "timezone": HOST,
                                                    "catch_up": "1h"},
}


def read(name: str) -> OldJob | Refusal:
    [found] = read_timer_unit(CORPUS / name, HOST)
    return found


def test_the_corpus_has_a_dozen_pairs_with_their_sources():
    pairs = [p for p in CORPUS.iterdir() if p.is_dir()]
    assert len(pairs) >= 12
    for folder in pairs:
        source = (folder / "SOURCE").read_text()
        assert re.search(r"^repository: https://github.com/\S+$", source, re.M), folder
        assert re.search(r"^commit: [0-9a-f]{40}$", source, re.M), folder
        assert "licence: " in source
    assert sorted(SCHEDULES) == TIMERS  # every timer has its expectation written here


@pytest.mark.parametrize("name", TIMERS)
def test_each_timer_becomes_its_schedule_or_its_refusal(name):
    expected, found = SCHEDULES[name], read(name)
    if isinstance(expected, str):
        assert isinstance(found, Refusal) and found.reason.startswith(expected), found
        assert "\n" not in found.line()
    else:
        assert isinstance(found, OldJob), found
        assert dict(found.schedule) == expected
        assert found.legacy == Path(name).name and found.steps


def _calendars(path: Path) -> list[str]:
    """The OnCalendar= values in effect, read straight from the file (no continuations or
    resets occur in the corpus, which this asserts)."""
    text = path.read_text()
    assert "\\\n" not in text and not re.search(r"^OnCalendar=\s*$", text, re.M)
    return re.findall(r"^OnCalendar=(.+?)\s*$", text, re.M)


def test_every_on_calendar_gives_systemds_own_elapses(conn):
    checked = 0
    for name in TIMERS:
        expressions = _calendars(CORPUS / name)
        found = read(name)
        if not expressions or isinstance(found, Refusal):
            continue
        check_against_systemd(conn, expressions, HOST, notes=found.notes)
        checked += 1
    assert checked >= 9


def test_commands_as_systemd_runs_them():
    """Written from the manuals: a "-" command's failure is ignored; %i is the instance,
    $KEEP the Environment= value split into words; no WorkingDirectory= is / for the system
    manager and the home folder for a user's; PATH is systemd's fixed one."""
    apt = read("apt-daily/apt-daily.timer")
    assert [(s.argv, s.ignore_failure, s.cwd) for s in apt.steps] == [
        (("/usr/lib/apt/apt-helper", "wait-online"), True, "/"),
        (("/usr/lib/apt/apt.systemd.daily", "update"), False, "/")]
    assert all(s.env == {"PATH": SYSTEM_PATH} for s in apt.steps)
    dump = read("pg-dump/pg_dump@15-main.timer")
    assert [s.argv for s in dump.steps] == [
        ("/usr/bin/pg_backupcluster", "15-main", "createdirectory"),
        ("/usr/bin/pg_backupcluster", "15-main", "dump"),
        ("/usr/bin/pg_backupcluster", "15-main", "expiredumps", "3")]
    assert dump.steps[0].env == {"PATH": SYSTEM_PATH, "KEEP": "3"} and dump.user == "postgres"
    assert any("full privileges" in n for n in dump.notes)
    monitor = read("brep-monitor/brep-monitor.timer")
    assert monitor.steps[0].argv == (
        "/home/brep/install/bin/brep-monitor", "--report-timeout", "86400", "--clean",
        "/home/brep/config/brep-module.conf", "public")
    assert read("snapper-backup/backup.timer").steps[0].cwd == "/root"  # WorkingDirectory=
    user = read("cli-backup/systemd/user/backup.homedir.timer")
    assert user.steps[0].cwd == str(Path.home())


# ---------------------------------------------------------------- systemd-analyze verify


@pytest.fixture(scope="module")
def system_units() -> Path:
    for folder in (Path("/usr/lib/systemd/system"), Path("/lib/systemd/system")):
        if (folder / "sysinit.target").exists():
            return folder
    pytest.fail("no systemd unit folder here (scripts/systemd-tools.sh install)")


def _root(tmp_path: Path, system_units: Path, folder: Path, job: OldJob | None) -> Path:
    """A root for `systemd-analyze verify --root`: the host's own units, the pair, and a stub
    for each program the reader found (verify checks that each command exists)."""
    root = tmp_path / folder.name
    shutil.copytree(system_units, root / "usr/lib/systemd/system", symlinks=True)
    units = root / "etc/systemd/system"
    units.mkdir(parents=True)
    for unit in folder.rglob("*"):
        if unit.suffix in (".timer", ".service"):
            target = units / unit.name
            if unit.is_symlink():
                target.symlink_to(os.readlink(unit))
            else:
                shutil.copy(unit, target)
    for step in job.steps if job else ():
        program = root / (step.argv[0].lstrip("/") if step.argv[0].startswith("/")
                          else f"usr/bin/{step.argv[0]}")
        program.parent.mkdir(parents=True, exist_ok=True)
        program.write_text("#!/bin/sh\n")
        program.chmod(0o755)
    return root


def _verify(root: Path, names: list[str]) -> subprocess.CompletedProcess[str]:
    """verify, with a stub for a unit the pair names but does not ship (postgresql.service)."""
    for _ in range(4):
        result = subprocess.run(
            [systemd_analyze(), "verify", "--man=no", f"--root={root}", *names],
            capture_output=True, text=True, timeout=60, check=False,
            env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "SYSTEMD_LOG_COLOR": "0"})
        missing = re.findall(r"Unit (\S+) not found", result.stderr)
        if not missing:
            return result
        for unit in missing:
            (root / "etc/systemd/system" / unit).write_text("[Service]\nExecStart=/bin/true\n")
    return result


@pytest.mark.parametrize("name", TIMERS)
def test_systemd_verify_loads_each_unit(tmp_path, system_units, name):
    found = read(name)
    job = found if isinstance(found, OldJob) else None
    root = _root(tmp_path, system_units, (CORPUS / name).parent, job)
    names = [Path(name).name]
    if job:
        names.append(Path(name).name.removesuffix(".timer") + ".service")
    result = _verify(root, names)
    assert result.returncode == 0, result.stderr
    assert "ignoring" not in result.stderr.lower(), result.stderr
