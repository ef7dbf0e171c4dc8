"""registry.py and durations.py: the file's shape. Every shape problem names file, kind and
key; valid files round-trip to the JSON `tickq.sync_registry` takes. The rules on values are
the database's (tests_py/test_registry_rules.py, tests_sql/18-registry-rules.sql)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import psycopg
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tickq.db.api import registry as registry_api
from tickq.db.errors import RegistryRefused
from tickq.host import programs
from tickq.registry import Problem, RegistryError, env_digest, load_registry, parse_registry
from tickq.registry.durations import format_duration, parse_duration

FILE = "registry.toml"

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


def parse(text: str, base_dir: Path | None = None):
    return parse_registry(textwrap.dedent(text), FILE, base_dir or Path.cwd())


def problems(text: str, base_dir: Path | None = None) -> list[Problem]:
    with pytest.raises(RegistryError) as info:
        parse(text, base_dir)
    return info.value.problems


def one_problem(text: str, base_dir: Path | None = None) -> Problem:
    found = problems(text, base_dir)
    assert len(found) == 1, [str(p) for p in found]
    return found[0]


def kind(body: str, name: str = "job") -> str:
    """A registry holding one kind `name` with `body` as its keys."""
    return f"[kinds.{name}]\n" + textwrap.dedent(body)


GOOD = 'command = ["bin/x"]\nevery = "5m"\ntimeout = "1m"\n'


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


# --- problems: where they are reported ----------------------------------------------------------


def test_problem_reads_file_kind_key_message() -> None:
    problem = one_problem(kind('command = ["x"]\nat = "06:00"\ntimeout = 300\n', "weekly_ingest"))
    assert (problem.file, problem.kind, problem.key) == (FILE, "weekly_ingest", "timeout")
    assert str(problem) == (
        'registry.toml: kind "weekly_ingest", key "timeout": '
        'duration must be a string like "5m" or "1h30m", got 300'
    )


def test_bad_toml_reports_line_and_column() -> None:
    problem = one_problem('[settings]\nslots = 3\ntick = "5m\n')
    assert (problem.file, problem.kind, problem.key) == (FILE, None, None)
    assert "line 3" in problem.message
    assert "column" in problem.message


def test_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "nope.toml"
    with pytest.raises(RegistryError) as info:
        load_registry(path)
    [problem] = info.value.problems
    assert (problem.file, problem.kind, problem.key) == (str(path), None, None)
    assert "not found" in problem.message
    assert str(path) in str(info.value)


@pytest.mark.parametrize(
    ("text", "expected_kind", "expected_key", "words"),
    [
        ("colour = 1\n", None, "colour", "unknown key"),
        ("[settings]\nslot = 3\n", None, "settings.slot", "unknown key"),
        (kind(GOOD + "retry = 1\n"), "job", "retry", "unknown key"),
        ("settings = 3\n", None, "settings", "must be a table"),
        ("kinds = []\n", None, "kinds", "must be a table"),
        ("[settings]\nslots = true\n", None, "settings.slots", "integer"),
        ('[settings]\ntick = "300"\n', None, "settings.tick", "unit"),
        ('[settings]\nalert_command = "bin/alert"\n', None, "settings.alert_command", "argv"),
        ('[settings]\nalert_timeout = "5x"\n', None, "settings.alert_timeout", "duration"),
        (kind('every = "5m"\ntimeout = "1m"\n'), "job", "command", "missing"),
        (kind('command = ["x"]\nevery = "5m"\n'), "job", "timeout", "missing"),
        (kind('command = "bin/x --flag"\nevery = "5m"\ntimeout = "1m"\n'), "job", "command",
         'not one string: write ["bin/x", "--flag"]'),
        (kind('command = []\nevery = "5m"\ntimeout = "1m"\n'), "job", "command", "empty"),
        (kind('command = ["x", ""]\nevery = "5m"\ntimeout = "1m"\n'), "job", "command",
         "command[1]"),
        (kind('command = ["x", 3]\nevery = "5m"\ntimeout = "1m"\n'), "job", "command",
         "command[1]"),
        (kind('command = ["x"]\nevery = "5 minutes"\ntimeout = "1m"\n'), "job", "every",
         "duration must look like"),
        (kind('command = ["x"]\nevery = 300\ntimeout = "1m"\n'), "job", "every", "string"),
        (kind(GOOD + "retries = 1.5\n"), "job", "retries", "integer"),
        (kind(GOOD + 'enabled = "yes"\n'), "job", "enabled", "true or false"),
        (kind(GOOD + "env = { A = 1 }\n"), "job", "env", "env.A"),
        (kind(GOOD + 'env = "A=1"\n'), "job", "env", "table"),
        (kind(GOOD + "cwd = 3\n"), "job", "cwd", "directory path"),
        ("[kinds]\njob = 3\n", "job", None, "must be a table"),
        ('[settings]\ntimezone = 3\n', None, "settings.timezone", "string"),
        ("[settings]\ncapacity_margin = \"1\"\n", None, "settings.capacity_margin", "number"),
        (kind(GOOD + "priority = 1\n"), "job", "priority", "string"),
        (kind('command = ["x"]\nat = "06:00"\non = "mon"\ntimeout = "1m"\n'), "job", "on", "list"),
        (kind('command = ["x"]\nat = [6]\ntimeout = "1m"\n'), "job", "at", "HH:MM"),
    ],
)  # fmt: skip
def test_each_invalid_value_names_file_kind_and_key(
    text: str, expected_kind: str | None, expected_key: str | None, words: str
) -> None:
    problem = one_problem(text)
    assert (problem.file, problem.kind, problem.key) == (FILE, expected_kind, expected_key)
    assert words in problem.message
    assert str(problem).startswith(f"{FILE}: ")


@pytest.mark.parametrize("make", ["missing", "a file"])
def test_a_cwd_that_is_no_folder_here_is_that_kinds_own_problem(tmp_path: Path, make: str) -> None:
    """Read, not refused: a folder missing on this host stops only that kind, when it runs
    (tickq.host.programs says why; tests_py/test_isolation.py runs it)."""
    if make == "a file":
        (tmp_path / "no").write_text("")
    registry = parse(kind(GOOD + 'cwd = "no/such/dir"\n' if make == "missing"
                          else GOOD + 'cwd = "no"\n'), tmp_path)
    job = registry.kinds["job"]
    assert job.cwd == (tmp_path / ("no/such/dir" if make == "missing" else "no")).resolve()
    found = programs.problems(registry)
    assert len(found) == 1 and "'job'" in found[0] and str(job.cwd) in found[0], found


def test_every_problem_in_a_file_is_reported() -> None:
    text = """
        extra = true
        [settings]
        slots = "3"
        tick = "5"
        [kinds.first]
        command = "bin/first"
        every = "0 m"
        timeout = "1m"
        [kinds.second]
        command = ["bin/second"]
        at = 24
        timeout = "1m"
        priority = 1
        [kinds.third]
        command = ["bin/third"]
        every = "1m"
        timeout = "1m"
    """
    found = problems(text)
    assert {(p.kind, p.key) for p in found} == {
        (None, "extra"),
        (None, "settings.slots"),
        (None, "settings.tick"),
        ("first", "command"),
        ("first", "every"),
        ("second", "at"),
        ("second", "priority"),
    }
    assert len(found) == 7
    assert all(p.file == FILE for p in found)
    message = str(RegistryError(found))
    assert message.count("\n") == 6  # one line per problem


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
    (('resume = true', 'resume = true\ntimeout = "29m"'), "timeout", "sum of its steps"),
    (('name = "ingest"', 'name = "sf_pull"'), "steps", 'step name "sf_pull" is used twice'),
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
