"""Every shape problem of a registry file names file, kind and key, and every one of them is
reported at once (the values' rules are the database's: test_registry_rules.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from registry_text import FILE, GOOD, kind, one_problem, parse, problems

from tickq.host import programs
from tickq.registry import RegistryError, load_registry

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
