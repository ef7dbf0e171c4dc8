"""The `tickq` command as a real subprocess: exit statuses, messages, `run`, `status` and the
JSON log format."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import psycopg
import pytest
from processes import tickq

REPO = Path(__file__).resolve().parent.parent
NOWHERE = "postgresql://nobody@127.0.0.1:1/x"  # nothing listens on port 1

VALID = """\
[settings]
slots = 2

[kinds.hello]
command = ["sh", "-c", "echo hello from $TICKQ_KIND trigger=$TICKQ_TRIGGER"]
every = "1h"
timeout = "30s"
"""


def registry_file(folder: Path, text: str) -> Path:
    path = folder / "registry.toml"
    path.write_text(textwrap.dedent(text))
    return path


# ---------------------------------------------------------------- exit 2: invalid registry

KIND_A = """\
[kinds.a]
command = ["true"]
every = "5m"
timeout = "30s"
"""

INVALID = {
    # name: (registry text, kind, key, words the message must hold)
    "bad TOML": ('[kinds.a]\ncommand = ["true"\nevery = "5m"\n', None, None, "invalid TOML"),
    "unknown key": (KIND_A + 'colour = "red"\n', "a", "colour", "unknown key"),
    "missing command": (KIND_A.replace('command = ["true"]\n', ""), "a", "command", "missing"),
    "command as one string": (
        KIND_A.replace('["true"]', '"bin/x --flag"'), "a", "command", "not one string"),
    "bad duration": (KIND_A.replace('"5m"', '"5 minutes"'), "a", "every", "5 minutes"),
    "zone not a string": (
        KIND_A.replace('every = "5m"', 'at = "06:00"\ntimezone = 3'), "a", "timezone", "string"),
}


@pytest.mark.parametrize("case", list(INVALID))
def test_an_invalid_registry_exits_2_before_touching_the_database(
    tmp_path: Path, case: str
) -> None:
    text, kind, key, words = INVALID[case]
    path = registry_file(tmp_path, text)

    # The URL points nowhere: reaching for the database would give exit 3, not 2.
    result = tickq("tick", "--registry", str(path), "--database-url", NOWHERE)

    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    problems = [ln for ln in result.stderr.splitlines() if ln.startswith(f"tickq: {path}")]
    assert len(problems) == 1, result.stderr
    [problem] = problems
    if kind is not None:
        assert f'kind "{kind}"' in problem
        assert f'key "{key}"' in problem
    assert words in problem
    assert "cannot reach" not in result.stderr
    assert result.stdout == ""


def test_bad_toml_names_the_line(tmp_path: Path) -> None:
    path = registry_file(tmp_path, INVALID["bad TOML"][0])
    result = tickq("sync", "--registry", str(path), "--database-url", NOWHERE)
    assert result.returncode == 2
    assert "line 2" in result.stderr or "line 3" in result.stderr, result.stderr


def test_every_problem_is_reported_at_once(tmp_path: Path) -> None:
    path = registry_file(tmp_path, KIND_A.replace('"30s"', '"soon"') + 'colour = "red"\n'
                         + '\n[kinds.b]\ncommand = "x"\nevery = "1m"\ntimeout = "1m"\n')
    result = tickq("tick", "--registry", str(path), "--database-url", NOWHERE)
    assert result.returncode == 2
    assert 'kind "a", key "timeout"' in result.stderr
    assert 'kind "a", key "colour"' in result.stderr
    assert 'kind "b", key "command"' in result.stderr
    assert "invalid registry: 3 problem(s)" in result.stderr


@pytest.mark.parametrize(("setting", "words"), [
    # the rules on values are the database's (tickq.registry_limits, tickq.is_timezone...)
    ('retry_base = "2h"', 'key "settings.retry_max"'),
    ('timezone = "GMT+0"', 'key "settings.timezone"'),  # POSIX offsets read backwards
    ('timezone = "Mars/Olympus_Mons"', "Mars/Olympus_Mons"),
    ("slots = 3000000000", 'key "settings.slots": must be a whole number from 1 to 1000'),
    ('lease_margin = "0s"', 'key "settings.lease_margin": must be a duration from 1s to 1d'),
])
def test_a_registry_the_database_refuses_exits_2_and_changes_nothing(
    tmp_path: Path, db_url: str, conn: psycopg.Connection, setting: str, words: str
) -> None:
    path = registry_file(tmp_path, f"[settings]\n{setting}\n\n" + KIND_A.replace(
        '["true"]', '["touch", "ran"]'))

    for command in ("tick", "sync", "run"):
        args = [command, "a"] if command == "run" else [command]
        result = tickq(*args, "--registry", str(path), "--database-url", db_url)

        assert result.returncode == 2, result.stderr
        assert "Traceback" not in result.stderr
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 2 and str(path) in lines[0] and words in lines[0], result.stderr
        assert lines[1] == "tickq: invalid registry: 1 problem(s)"
    assert not (tmp_path / "ran").exists()
    assert conn.execute("SELECT count(*) FROM tickq.job_kind WHERE name = 'a'").fetchone() == (0,)
    assert conn.execute("SELECT slots, timezone FROM tickq.settings").fetchone() == (3, "UTC")


# ---------------------------------------------------------------- exit 3: no database


def test_an_unreachable_database_exits_3_with_a_one_line_cause(tmp_path: Path) -> None:
    """"An unreachable database gives exit 3"."""
    path = registry_file(tmp_path, VALID)
    result = tickq("tick", "--registry", str(path), "--database-url", NOWHERE)

    assert result.returncode == 3, result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("tickq: cannot reach the database:")
    assert "127.0.0.1" in lines[0] or "port 1" in lines[0]
    assert not (tmp_path / "hello").exists()


@pytest.mark.parametrize("command", ["status", "sync", "migrate"])
def test_other_commands_exit_3_without_a_database(tmp_path: Path, command: str) -> None:
    path = registry_file(tmp_path, VALID)
    result = tickq(command, "--registry", str(path), "--database-url", NOWHERE)
    assert result.returncode == 3, result.stderr
    assert "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr


# ---------------------------------------------------------------- tickq run


def test_run_is_a_manual_run_even_when_the_kind_is_not_due(
    tmp_path: Path, db_url: str, conn: psycopg.Connection
) -> None:
    path = registry_file(tmp_path, VALID)
    ticked = tickq("tick", "--registry", str(path), "--database-url", db_url)
    assert ticked.returncode == 0, ticked.stderr

    result = tickq("run", "hello", "--registry", str(path), "--database-url", db_url)

    assert result.returncode == 0, result.stderr
    assert "hello from hello trigger=manual" in result.stdout
    rows = conn.execute(
        "SELECT run_trigger::text, outcome::text, output_tail FROM tickq.job_run"
        " WHERE kind = 'hello' ORDER BY id"
    ).fetchall()
    assert rows == [
        ("schedule", "ok", "hello from hello trigger=schedule\n"),
        ("manual", "ok", "hello from hello trigger=manual\n"),
    ]
    lease = conn.execute("SELECT run_id FROM tickq.job_kind WHERE name = 'hello'").fetchall()
    assert lease == [(None,)]


def test_run_of_an_unknown_kind_exits_1_with_a_clear_message(
    tmp_path: Path, db_url: str, conn: psycopg.Connection
) -> None:
    path = registry_file(tmp_path, VALID)
    result = tickq("run", "nope", "--registry", str(path), "--database-url", db_url)

    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert 'no kind "nope"' in result.stderr
    assert conn.execute("SELECT count(*) FROM tickq.job_run").fetchone() == (0,)


# ---------------------------------------------------------------- tickq status


STATUS_REGISTRY = """\
[kinds.good]
command = ["sh", "-c", "echo fine"]
every = "1h"
timeout = "30s"

[kinds.bad]
command = ["sh", "-c", "echo broken; exit 3"]
every = "1h"
timeout = "30s"
"""


def test_status_json_after_a_tick(tmp_path: Path, db_url: str) -> None:
    path = registry_file(tmp_path, STATUS_REGISTRY)
    ticked = tickq("tick", "--registry", str(path), "--database-url", db_url)
    assert ticked.returncode == 0, ticked.stderr

    result = tickq("status", "--json", "--database-url", db_url)

    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    kinds = {k["kind"]: k for k in doc["kinds"] if not k["kind"].startswith("tickq.")}
    assert sorted(kinds) == ["bad", "good"]
    assert kinds["good"]["last_outcome"] == "ok"
    assert kinds["bad"]["last_outcome"] == "failed"
    assert kinds["bad"]["failure_streak"] == 1
    assert kinds["good"]["state"] == "waiting"
    assert doc["stale_due"] == []


def test_status_warns_on_top_about_a_stale_kind(
    tmp_path: Path, db_url: str, conn: psycopg.Connection
) -> None:
    path = registry_file(tmp_path, STATUS_REGISTRY)
    ticked = tickq("tick", "--registry", str(path), "--database-url", db_url)
    assert ticked.returncode == 0, ticked.stderr
    before = tickq("status", "--database-url", db_url)
    assert before.returncode == 0, before.stderr
    assert "stale" not in before.stdout.lower()

    updated = conn.execute(
        "UPDATE tickq.job_kind SET due_at = now() - interval '1 hour'"
        " WHERE name = 'good' AND enabled AND run_id IS NULL"
    )
    assert updated.rowcount == 1
    result = tickq("status", "--database-url", db_url)

    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("WARNING stale: good "), result.stdout
    assert "unclaimed for 1h" in lines[0]
    assert not any("bad" in ln for ln in lines if ln.startswith("WARNING"))
    table = {ln.split()[0]: ln.split() for ln in lines[1:] if ln.split()}
    assert table["good"][3] == "stale" or "stale" in table["good"]
    as_json = json.loads(tickq("status", "--json", "--database-url", db_url).stdout)
    assert [s["kind"] for s in as_json["stale_due"]] == ["good"]


# ---------------------------------------------------------------- --log-format json


def test_json_log_format_makes_every_stdout_line_a_json_event(
    tmp_path: Path, db_url: str
) -> None:
    path = registry_file(tmp_path, """\
        [settings]
        slots = 2

        [kinds.quoted]
        command = ["sh", "-c", "echo 'a \\"quoted\\" line=x'"]
        every = "1h"
        timeout = "30s"

        [kinds.failing]
        command = ["sh", "-c", "exit 7"]
        every = "1h"
        timeout = "30s"
    """)
    with psycopg.connect(db_url, autocommit=True) as conn:  # synced once before: drift counts
        conn.execute("SELECT tickq.sync_registry('{\"kinds\": {}}')")
    result = tickq("tick", "--registry", str(path), "--database-url", db_url,
                   "--log-format", "json")

    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines
    events = [json.loads(line) for line in lines]
    assert all(isinstance(e, dict) and isinstance(e.get("event"), str) for e in events)
    names = [e["event"] for e in events]
    assert names[-1] == "tick.done"
    assert "registry.drift" in names  # settings.slots 3 -> 2
    claimed = [e["kind"] for e in events if e["event"] == "run.claimed"]
    assert sorted(k for k in claimed if not k.startswith("tickq.")) == ["failing", "quoted"]
    finished = {e["kind"]: e for e in events if e["event"] == "run.finished"}
    assert finished["quoted"]["outcome"] == "ok"
    assert finished["failing"]["exit_code"] == 7
    assert finished["failing"]["level"] == "warning"
    assert events[-1]["claimed"] == len(claimed)


def test_psql_opens_the_configured_database_and_passes_psql_options(db_url: str) -> None:
    result = tickq("psql", "--database-url", db_url, "-At", "-c",
                   "SELECT count(*) FROM tickq.settings")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "1"
