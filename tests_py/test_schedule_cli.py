"""`tickq next KIND` and `tickq schedule EXPR`: a schedule's next slots, in its zone and in UTC,
asked of the one SQL calendar (tickq.schedule_slots); `tickq upcoming` lists the new schedules
from the same function. Real `tickq` subprocesses against a real PostgreSQL.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

REGISTRY = """\
[settings]
timezone = "Europe/London"

[kinds.close]
command = ["true"]
at = "00:00"
days = [-1]
timeout = "30s"

[kinds.board]
command = ["true"]
at = "09:30"
on = ["1st mon", "last fri"]
months = ["jan", "jul"]
timezone = "America/New_York"
timeout = "30s"

[kinds.quarter]
command = ["true"]
cron = "0 6 1 jan,apr,jul,oct *"
timeout = "30s"
"""


def tickq(*args: str, db_url: str | None = None,
          cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("DATABASE_URL", "TICKQ_REGISTRY", "TICKQ_LOG_FORMAT")}
    env["PYTHONPATH"] = str(REPO / "python_runner")
    if db_url is not None:
        env["DATABASE_URL"] = db_url
    return subprocess.run([sys.executable, "-m", "tickq.cli", *args], env=env, cwd=cwd,
                          capture_output=True, text=True, timeout=120)


def _registry(tmp_path: Path) -> str:
    path = tmp_path / "registry.toml"
    path.write_text(REGISTRY)
    return str(path)


def test_next_lists_a_kinds_slots_in_its_zone_and_utc(tmp_path: Path, db_url: str) -> None:
    path = _registry(tmp_path)
    result = tickq("next", "close", "--count", "3", "--from", "2026-02-27T12:00:00Z",
                   "--registry", path, db_url=db_url)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "close: at 00:00 on days last Europe/London"
    assert "2026-02-28T00:00:00+00:00" in lines[1] and "2026-02-28T00:00:00Z" in lines[1]
    assert "2026-03-31T00:00:00+01:00" in lines[2] and "2026-03-30T23:00:00Z" in lines[2]
    assert "2026-04-30T00:00:00+01:00" in lines[3]
    assert len(lines) == 4


def test_next_json_gives_each_slot_with_its_offset(tmp_path: Path, db_url: str) -> None:
    path = _registry(tmp_path)
    result = tickq("next", "board", "--from", "2026-01-01T00:00:00Z", "--json",
                   "--registry", path, db_url=db_url)
    assert result.returncode == 0, result.stderr
    slots = json.loads(result.stdout)
    assert len(slots) == 10  # the default count
    assert [s["at"] for s in slots[:4]] == [
        "2026-01-05T09:30:00-05:00", "2026-01-30T09:30:00-05:00",
        "2026-07-06T09:30:00-04:00", "2026-07-31T09:30:00-04:00",
    ]
    assert slots[0]["utc"] == "2026-01-05T14:30:00Z"
    assert slots[0]["timezone"] == "America/New_York"


def test_next_for_a_cron_kind_and_an_unknown_kind(tmp_path: Path, db_url: str) -> None:
    path = _registry(tmp_path)
    result = tickq("next", "quarter", "--count", "2", "--from", "2026-02-01T00:00:00Z", "--json",
                   "--registry", path, db_url=db_url)
    assert result.returncode == 0, result.stderr
    assert [s["at"] for s in json.loads(result.stdout)] == [
        "2026-04-01T06:00:00+01:00", "2026-07-01T06:00:00+01:00"]
    missing = tickq("next", "nope", "--registry", path, db_url=db_url)
    assert missing.returncode == 1, missing.stderr
    assert "nope" in missing.stderr


def test_schedule_takes_any_cron_string_without_a_registry(tmp_path: Path, db_url: str) -> None:
    result = tickq("schedule", "*/15 9-17 * * mon-fri", "--timezone", "Europe/Paris",
                   "--count", "3", "--from", "2026-06-05T15:30:00Z", "--json", db_url=db_url,
                   cwd=tmp_path)  # no registry.toml there
    assert result.returncode == 0, result.stderr
    assert [s["at"] for s in json.loads(result.stdout)] == [
        "2026-06-05T17:45:00+02:00", "2026-06-08T09:00:00+02:00", "2026-06-08T09:15:00+02:00"]
    text = tickq("schedule", "@monthly", "--count", "1", "--from", "2026-06-05T00:00:00Z",
                 db_url=db_url, cwd=tmp_path)
    assert text.returncode == 0, text.stderr
    assert text.stdout.splitlines()[0] == 'cron "@monthly": at 00:00 on days 1 UTC'


def test_schedule_refuses_a_bad_string_naming_what_is_wrong(tmp_path: Path, db_url: str) -> None:
    for expression, words in (("61 * * * *", 'minute field "61"'),
                              ("0 0 6 * * *", "has 6 fields"),
                              ("@reboot", "@reboot runs once")):
        result = tickq("schedule", expression, db_url=db_url)
        assert result.returncode == 2, (expression, result.stderr)
        assert result.stderr.startswith("tickq: cron: ") and words in result.stderr, result.stderr
        assert "Traceback" not in result.stderr


def test_upcoming_lists_the_new_schedules(tmp_path: Path, db_url: str) -> None:
    path = _registry(tmp_path)
    assert tickq("sync", "--registry", path, db_url=db_url).returncode == 0
    result = tickq("upcoming", "--hours", "2160", "--limit", "20000", "--json", "--registry", path,
                   db_url=db_url)
    assert result.returncode == 0, result.stderr
    rows = json.loads(result.stdout)
    schedules = {r["kind"]: r["schedule"] for r in rows}
    assert schedules["quarter"] == ('cron "0 6 1 jan,apr,jul,oct *": '
                                    "at 06:00 on days 1 in jan,apr,jul,oct Europe/London")
    assert schedules["close"] == "at 00:00 on days last Europe/London"
    assert len([r for r in rows if r["kind"] == "close"]) >= 2


CHECKED = """\
[settings]
slots = 2

[kinds.friday13]
command = ["true"]
cron = "0 3 13 * fri"
timeout = "1m"

[kinds.thirteenth]
command = ["true"]
cron = "0 4 13 * *"
timeout = "1m"

[kinds.close]
command = ["true"]
at = "00:00"
days = [-1]
timeout = "1m"
"""


def test_check_simulates_the_new_schedules_and_warns_about_crons_or_rule(
    tmp_path: Path, db_url: str
) -> None:
    path = tmp_path / "registry.toml"
    path.write_text(CHECKED)
    result = tickq("check", "--registry", str(path), db_url=db_url)
    assert result.returncode == 0, result.stdout + result.stderr
    warnings = [line for line in result.stderr.splitlines() if "warning" in line]
    assert len(warnings) == 1, result.stderr
    assert 'kind "friday13", key "cron"' in warnings[0] and "either" in warnings[0]
    # The capacity table names each schedule in words, and the worst case ran them.
    assert 'cron "0 3 13 * fri": at 03:00' in result.stdout
    assert "at 00:00 on days last UTC" in result.stdout
    worst = {line.split()[0]: line.split()[2] for line in
             result.stdout.split("worst case")[1].splitlines()
             if line.split()[:1] in (["close"], ["friday13"], ["thirteenth"])}
    assert worst["thirteenth"] == "1"  # a month-long window...
    assert int(worst["close"]) >= 4  # ...and a month end of each length (28, 29, 30, 31 days)
    assert int(worst["friday13"]) >= 5  # Fridays, and the 13th


def test_check_finds_a_month_end_pile_up(tmp_path: Path, db_url: str) -> None:
    kinds = "".join(f'[kinds.close_{n}]\ncommand = ["true"]\nat = "00:00"\ndays = [-1]\n'
                    f'timeout = "10m"\n\n' for n in range(3))
    path = tmp_path / "registry.toml"
    path.write_text(f'[settings]\nslots = 1\nstale_after = "15m"\n\n{kinds}')
    result = tickq("check", "--registry", str(path), db_url=db_url)
    assert result.returncode == 1, result.stdout + result.stderr
    worst = result.stdout.split("worst case")[1]
    assert "close_2" in worst and "starved" in worst
    assert "close_2 (normal) waits 20m, longer than stale_after 15m" in result.stdout
    assert "behind close_0, close_1" in result.stdout
