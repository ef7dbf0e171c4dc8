"""registry.py: the file's shape. Valid files round-trip to the JSON `tickq.sync_registry`
takes; chains and irreversible kinds read as the database wants them. Where each shape problem
is named (file, kind and key): test_registry_problems.py; durations: test_durations.py. The
rules on values are the database's (tests_py/test_registry_rules.py,
tests_sql/18-registry-rules.sql)."""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest
from registry_text import FILE, GOOD, kind, one_problem, parse, problems

from tickq.db.api import registry as registry_api
from tickq.db.errors import RegistryRefused
from tickq.registry import env_digest, load_registry, parse_registry

VALID = """
[settings]
slots = 4
tick = "1m"
stale_after = "1h30m"
timezone = "America/New_York"
lease_margin = "2m"
capacity_margin = 0.5
alert_command = ["bin/alert", "--page"]
alert_after = 5
alert_timeout = "10s"

[kinds.send_scheduled_email]
command = ["bin/send-email", "--due"]
every = "5m"
timeout = "4m"
priority = "urgent"
retries = 2

[kinds.weekly_ingest]
command = ["bin/ingest", "--weekly"]
at = "06:00"
on = ["mon"]
timezone = "Europe/London"
timeout = "25m"

[kinds.twice_daily]
command = ["bin/report"]
at = ["06:00", "18:00"]
timeout = "1h"
enabled = false
cwd = "jobs"
env = { REPORT_MODE = "full", EMPTY = "" }
"""



# --- a valid file -------------------------------------------------------------------------------


def test_valid_file_round_trips_to_sync_json(tmp_path: Path) -> None:
    (tmp_path / "jobs").mkdir()
    registry = parse(VALID, tmp_path)
    assert registry.to_sync_json() == {
        "settings": {
            "slots": 4,
            "tick": 60,
            "stale_after": 5400,
            "lease_margin": 120,
            "timezone": "America/New_York",
            "capacity_margin": 0.5,
            "alert_after": 5,
            "retry_base": 30,
            "retry_max": 3600,
            "housekeeping_every": 900,
            "housekeeping_timeout": 60,
            "retention": 2592000,
            "keep_runs": 100,
            "alert_timeout": 10,
            "db_connect_timeout": 10,
            "db_statement_timeout": 60,
            "db_lock_timeout": 10,
            "ping_timeout": 5,
        },
        "kinds": {
            "send_scheduled_email": {
                "command": ["bin/send-email", "--due"],
                "every": 300,
                "timeout": 240,
                "priority": "urgent",
                "retries": 2,
                "enabled": True,
            },
            "weekly_ingest": {
                "command": ["bin/ingest", "--weekly"],
                "at": ["06:00"],
                "on": ["mon"],
                "timezone": "Europe/London",
                "timeout": 1500,
                "priority": "normal",
                "retries": 0,
                "enabled": True,
            },
            "twice_daily": {
                "command": ["bin/report"],
                "at": ["06:00", "18:00"],
                # no timezone: the database gives it the settings' zone (tickq.parse_kind)
                "timeout": 3600,
                "priority": "normal",
                "retries": 0,
                "enabled": False,
                "cwd": str((tmp_path / "jobs").resolve()),
                # values go to the database as digests only (docs/explanation/security.md)
                "env": {"REPORT_MODE": env_digest("twice_daily", "REPORT_MODE", "full"),
                        "EMPTY": env_digest("twice_daily", "EMPTY", "")},
            },
        },
    }
    assert list(registry.kinds) == ["send_scheduled_email", "weekly_ingest", "twice_daily"]
    assert registry.settings.alert_command == ("bin/alert", "--page")
    assert registry.settings.alert_timeout == 10


def test_kinds_and_settings_are_immutable(tmp_path: Path) -> None:
    (tmp_path / "jobs").mkdir()
    registry = parse(VALID, tmp_path)
    weekly = registry.kinds["weekly_ingest"]
    assert weekly.command == ("bin/ingest", "--weekly")
    assert (weekly.every, weekly.at, weekly.on) == (None, ("06:00",), ("mon",))
    assert weekly.timeout == 1500
    assert registry.kinds["twice_daily"].cwd == (tmp_path / "jobs").resolve()
    with pytest.raises(TypeError):
        registry.kinds["other"] = weekly  # type: ignore[index]
    with pytest.raises(TypeError):
        registry.kinds["twice_daily"].env["X"] = "y"  # type: ignore[index]
    with pytest.raises(AttributeError):
        weekly.timeout = 1  # type: ignore[misc]


def test_defaults() -> None:
    registry = parse(kind(GOOD))
    assert registry.to_sync_json()["settings"] == {
        "slots": 3,
        "tick": 300,
        "stale_after": 900,
        "lease_margin": 300,
        "timezone": "UTC",
        "capacity_margin": 0.25,
        "alert_after": 3,
        "retry_base": 30,
        "retry_max": 3600,
        "housekeeping_every": 900,
        "housekeeping_timeout": 60,
        "retention": 2592000,
        "keep_runs": 100,
        "alert_timeout": 30,
        "db_connect_timeout": 10,
        "db_statement_timeout": 60,
        "db_lock_timeout": 10,
        "ping_timeout": 5,
    }
    assert registry.settings.alert_command is None
    assert (registry.settings.ping_url, registry.settings.ping_timeout) == (None, 5)
    assert registry.settings.alert_timeout == 30
    job = registry.kinds["job"]
    assert (job.priority, job.retries, job.enabled) == ("normal", 0, True)
    assert (job.cwd, dict(job.env)) == (None, {})
    assert job.timezone is None
    assert "timezone" not in registry.to_sync_json()["kinds"]["job"]


def test_empty_file_is_an_empty_registry() -> None:
    assert parse("").to_sync_json()["kinds"] == {}


def test_toml_local_time_is_accepted_for_at() -> None:
    registry = parse(kind('command = ["x"]\nat = [06:30:00, "18:00"]\ntimeout = "1m"\n'))
    assert registry.kinds["job"].at == ("06:30", "18:00")


def test_load_registry_resolves_cwd_against_the_file_directory(tmp_path: Path) -> None:
    (tmp_path / "work").mkdir()
    path = tmp_path / "registry.toml"
    path.write_text(kind(GOOD + 'cwd = "work"\n'))
    registry = load_registry(path)
    assert registry.kinds["job"].cwd == (tmp_path / "work").resolve()
    assert registry.kinds["job"].cwd.is_absolute()


CHAIN = """
[kinds.payout]
command = ["bin/payout"]
every = "1h"
timeout = "10m"
irreversible = true
legacy = "timeout 10m bin/payout"

[kinds.core]
every = "1h"
resume = true

[[kinds.core.steps]]
name = "sf_pull"
command = ["bin/sf", "pull"]
timeout = "25m"
env = { A = "b" }
legacy = "timeout 25m bin/sf pull"

[[kinds.core.steps]]
name = "ingest"
command = ["bin/ingest"]
timeout = "5m"
continue_on_failure = true
"""


def test_irreversible_kinds_and_chains_round_trip_without_legacy_lines() -> None:
    registry = parse(CHAIN)
    payout, core = registry.kinds["payout"], registry.kinds["core"]
    assert payout.irreversible and payout.legacy == "timeout 10m bin/payout"
    assert core.timeout == 30 * 60, "a chain's timeout defaults to the sum of its steps'"
    assert core.command == () and core.resume
    assert [(s.name, s.timeout, s.continue_on_failure, s.legacy) for s in core.steps] == [
        ("sf_pull", 1500, False, "timeout 25m bin/sf pull"), ("ingest", 300, True, None)]
    sync = registry.to_sync_json()["kinds"]
    assert sync["payout"] == {"command": ["bin/payout"], "every": 3600, "timeout": 600,
                              "irreversible": True, "priority": "normal", "retries": 0,
                              "enabled": True}
    assert sync["core"] == {
        "steps": [
            {"name": "sf_pull", "command": ["bin/sf", "pull"], "timeout": 1500,
             "env": {"A": env_digest("core.sf_pull", "A", "b")}},
            {"name": "ingest", "command": ["bin/ingest"], "timeout": 300,
             "continue_on_failure": True},
        ],
        "resume": True, "every": 3600, "timeout": 1800, "priority": "normal", "retries": 0,
        "enabled": True,
    }


@pytest.mark.parametrize(("change", "key", "words"), [
    (('name = "ingest"', 'name = 7'), "steps[2].name", "step name must be a string"),
    (('continue_on_failure = true', 'shell = "sh"'), "steps[2].shell", "unknown key"),
    (('timeout = "5m"\ncontinue', 'continue'), "steps[2].timeout", "missing"),
    (('resume = true', 'resume = true\ncommand = ["x"]'), "steps", "not both"),
    (('irreversible = true', 'irreversible = "yes"'), "irreversible", "true or false"),
    (('legacy = "timeout 10m bin/payout"', 'legacy = 3'), "legacy", "must be a string"),
    (('legacy = "timeout 25m bin/sf pull"', 'legacy = ["x"]'), "steps[1].legacy",
     "must be a string"),
])
def test_chain_and_irreversible_mistakes_name_the_key(
    change: tuple[str, str], key: str, words: str
) -> None:
    found = problems(CHAIN.replace(*change, 1))
    assert [p.key for p in found] == [key], found
    assert words in found[0].message


def test_resume_is_for_chains_only() -> None:
    found = problems(KIND_RESUME)
    assert [(p.kind, p.key) for p in found] == [("a", "resume")]


KIND_RESUME = """
[kinds.a]
command = ["x"]
every = "1h"
timeout = "1m"
resume = true
"""


@pytest.mark.parametrize(("text", "kind_name", "key", "words"), [
    # A NUL where the process or the database needs text: the file's shape refuses it.
    (kind(GOOD + 'priority = "lo\\u0000w"\n'), "job", "priority", "NUL"),
    (kind('command = ["x"]\nat = "06:00"\ntimezone = "UTC\\u0000"\ntimeout = "1m"\n'), "job",
     "timezone", "NUL"),
    (kind(GOOD + 'cwd = "jobs\\u0000"\n'), "job", "cwd", "NUL"),
])
def test_what_json_cannot_carry_is_refused_with_its_key(
    text: str, kind_name: str | None, key: str | None, words: str
) -> None:
    problem = one_problem(text)
    assert (problem.kind, problem.key) == (kind_name, key)
    assert words in problem.message


@pytest.mark.parametrize(("text", "kind_name", "key", "words"), [
    # TOML can say nan, inf and a NUL in a kind's name; JSON and PostgreSQL text cannot. The
    # file's shape is fine: the model sends "nan", "inf" and "\\u0000", and the database, the
    # one owner of value rules, refuses each naming the key (tests_py/test_bad_values.py runs
    # the same through every command).
    ("[settings]\ncapacity_margin = nan\n" + kind(GOOD), None, "settings.capacity_margin",
     'got "nan"'),
    ("[settings]\ncapacity_margin = inf\n" + kind(GOOD), None, "settings.capacity_margin",
     'got "inf"'),
    # The name comes back as it was sent, its NUL written out (\\u0000): printable in a log.
    ('[kinds."a\\u0000b"]\n' + GOOD, "a\\u0000b", None, "kind name"),
])
def test_what_json_cannot_carry_is_the_databases_to_refuse(
    tmp_path: Path, conn: psycopg.Connection, text: str, kind_name: str | None,
    key: str | None, words: str,
) -> None:
    registry = parse_registry(text, FILE, tmp_path)
    with pytest.raises(RegistryRefused) as info:
        registry_api.sync_registry(conn, registry)
    [problem] = info.value.problems
    assert (problem.kind, problem.key) == (kind_name, key)
    assert words in problem.message
