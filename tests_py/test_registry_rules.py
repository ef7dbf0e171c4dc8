"""One owner per rule: the same bad values through the registry file (load_registry, then the
database's verdict) and through the JSON path (tickq.sync_registry) get the same verdict; and
the registry's failures through the real CLI end in one line per problem and the documented
exit status, never a traceback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from processes import tickq
from psycopg.types.json import Jsonb

from tickq import db
from tickq.db.api import registry as registry_api
from tickq.db.errors import RegistryRefused
from tickq.registry import RegistryError, load_registry

REPO = Path(__file__).resolve().parent.parent
KIND = 'command = ["true"]\nevery = "5m"\ntimeout = "30s"\n'
KIND_JSON = {"command": ["true"], "every": 300, "timeout": 30}
AT = '[kinds.a]\ncommand = ["true"]\nat = "06:00"\ntimeout = "30s"\n'
AT_JSON = {"command": ["true"], "at": "06:00", "timeout": 30}
CRON = '[kinds.a]\ncommand = ["true"]\ntimeout = "30s"\n'
CRON_JSON = {"command": ["true"], "timeout": 30}
CHAIN = ('[kinds.a]\nevery = "5m"\ntimeout = "1m"\n'
         '[[kinds.a.steps]]\nname = "one"\ncommand = ["true"]\ntimeout = "15s"\n'
         '[[kinds.a.steps]]\nname = "two"\ncommand = ["true"]\ntimeout = "15s"\n')
CHAIN_JSON = {"every": 300, "timeout": 60, "steps": [
    {"name": "one", "command": ["true"], "timeout": 15},
    {"name": "two", "command": ["true"], "timeout": 15}]}

# name: (settings TOML, kinds TOML, settings JSON, kinds JSON, kind, key)
CASES = {
    "slots 2^31-1": ("slots = 2147483647", "[kinds.a]\n" + KIND, {"slots": 2147483647},
                     {"a": KIND_JSON}, None, "slots"),
    "slots 0": ("slots = 0", "[kinds.a]\n" + KIND, {"slots": 0}, {"a": KIND_JSON}, None, "slots"),
    "retries 101": ("", "[kinds.a]\n" + KIND + "retries = 101\n", {},
                    {"a": {**KIND_JSON, "retries": 101}}, "a", "retries"),
    "keep_runs 0": ("keep_runs = 0", "[kinds.a]\n" + KIND, {"keep_runs": 0}, {"a": KIND_JSON},
                    None, "keep_runs"),
    "lease_margin 0s": ('lease_margin = "0s"', "[kinds.a]\n" + KIND, {"lease_margin": 0},
                        {"a": KIND_JSON}, None, "lease_margin"),
    "tick 2d": ('tick = "2d"', "[kinds.a]\n" + KIND, {"tick": 172800}, {"a": KIND_JSON}, None,
                "tick"),
    "timeout 8d": ("", "[kinds.a]\n" + KIND.replace('"30s"', '"8d"'), {},
                   {"a": {**KIND_JSON, "timeout": 691200}}, "a", "timeout"),
    "every 400d": ("", "[kinds.a]\n" + KIND.replace('"5m"', '"400d"'), {},
                   {"a": {**KIND_JSON, "every": 400 * 86400}}, "a", "every"),
    "capacity_margin 0.95": ("capacity_margin = 0.95", "[kinds.a]\n" + KIND,
                             {"capacity_margin": 0.95}, {"a": KIND_JSON}, None, "capacity_margin"),
    "alert_timeout 2h": ('alert_timeout = "2h"', "[kinds.a]\n" + KIND, {"alert_timeout": 7200},
                         {"a": KIND_JSON}, None, "alert_timeout"),
    "zone localtime": ('timezone = "localtime"', "[kinds.a]\n" + KIND,
                       {"timezone": "localtime"}, {"a": KIND_JSON}, None, "timezone"),
    "zone Factory": ('timezone = "Factory"', "[kinds.a]\n" + KIND, {"timezone": "Factory"},
                     {"a": KIND_JSON}, None, "timezone"),
    "zone PST": ('timezone = "PST"', "[kinds.a]\n" + KIND, {"timezone": "PST"},
                 {"a": KIND_JSON}, None, "timezone"),
    "zone IST": ('timezone = "IST"', "[kinds.a]\n" + KIND, {"timezone": "IST"},
                 {"a": KIND_JSON}, None, "timezone"),
    "zone lowercase": ("", '[kinds.a]\ncommand = ["true"]\nat = "06:00"\n'
                       'timezone = "europe/london"\ntimeout = "30s"\n', {},
                       {"a": {"command": ["true"], "at": ["06:00"], "timezone": "europe/london",
                              "timeout": 30}}, "a", "timezone"),
    "repeated at": ("", '[kinds.a]\ncommand = ["true"]\nat = ["06:00", "06:00"]\ntimeout = "30s"\n',
                    {}, {"a": {"command": ["true"], "at": ["06:00", "06:00"], "timeout": 30}},
                    "a", "at"),
    "repeated on": ("", '[kinds.a]\ncommand = ["true"]\nat = "06:00"\non = ["mon", "mon"]\n'
                    'timeout = "30s"\n', {},
                    {"a": {"command": ["true"], "at": ["06:00"], "on": ["mon", "mon"],
                           "timeout": 30}}, "a", "on"),
    "a day in a range and again": ("", AT + 'on = ["mon-fri", "wed"]\n', {},
                                   {"a": {**AT_JSON, "on": ["mon-fri", "wed"]}}, "a", "on"),
    "a range of no day": ("", AT + 'on = ["mon-fry"]\n', {},
                          {"a": {**AT_JSON, "on": ["mon-fry"]}}, "a", "on"),
    "chain timeout short of its steps": ("", CHAIN.replace('timeout = "1m"', 'timeout = "29s"'),
                                         {}, {"a": {**CHAIN_JSON, "timeout": 29}}, "a", "timeout"),
    "step name twice": ("", CHAIN.replace('name = "two"', 'name = "one"'), {},
                        {"a": {**CHAIN_JSON, "steps": [CHAIN_JSON["steps"][0]] * 2}}, "a", "steps"),
    "kind name": ("", "[kinds.Send_Email]\n" + KIND, {}, {"Send_Email": KIND_JSON},
                  "Send_Email", "name"),
    "reserved name": ("", '[kinds."tickq.mine"]\n' + KIND, {}, {"tickq.mine": KIND_JSON},
                      "tickq.mine", "name"),
    "on with every": ("", "[kinds.a]\n" + KIND + 'on = ["mon"]\n', {},
                      {"a": {**KIND_JSON, "on": ["mon"]}}, "a", "on"),
    "priority": ("", "[kinds.a]\n" + KIND + 'priority = "critical"\n', {},
                 {"a": {**KIND_JSON, "priority": "critical"}}, "a", "priority"),
    "days 0": ("", AT + "days = [0]\n", {}, {"a": {**AT_JSON, "days": [0]}}, "a", "days"),
    "days 32": ("", AT + "days = [1, 32]\n", {}, {"a": {**AT_JSON, "days": [1, 32]}}, "a", "days"),
    "days -32": ("", AT + "days = [-32]\n", {}, {"a": {**AT_JSON, "days": [-32]}}, "a", "days"),
    "6th mon": ("", AT + 'on = ["6th mon"]\n', {}, {"a": {**AT_JSON, "on": ["6th mon"]}}, "a",
                "on"),
    "month 13": ("", AT + "months = [13]\n", {}, {"a": {**AT_JSON, "months": [13]}}, "a", "months"),
    "month name": ("", AT + 'months = ["july"]\n', {}, {"a": {**AT_JSON, "months": ["july"]}}, "a",
                   "months"),
    "february 30": ("", AT + 'days = [30]\nmonths = ["feb"]\n', {},
                    {"a": {**AT_JSON, "days": [30], "months": ["feb"]}}, "a", "days"),
    "cron minute 61": ("", CRON + 'cron = "61 * * * *"\n', {},
                       {"a": {**CRON_JSON, "cron": "61 * * * *"}}, "a", "cron"),
    "cron six fields": ("", CRON + 'cron = "0 0 6 * * *"\n', {},
                        {"a": {**CRON_JSON, "cron": "0 0 6 * * *"}}, "a", "cron"),
    "cron @reboot": ("", CRON + 'cron = "@reboot"\n', {}, {"a": {**CRON_JSON, "cron": "@reboot"}},
                     "a", "cron"),
    "cron 30 feb": ("", CRON + 'cron = "0 0 30 2 *"\n', {},
                    {"a": {**CRON_JSON, "cron": "0 0 30 2 *"}}, "a", "cron"),
    "cron with days": ("", CRON + 'cron = "0 0 * * *"\ndays = [1]\n', {},
                       {"a": {**CRON_JSON, "cron": "0 0 * * *", "days": [1]}}, "a", "days"),
}


# Refused by the file's shape before the database sees them, in the same words.
SHAPE_TOO = {"on with every"}


def _file(folder: Path, settings: str, kinds: str) -> Path:
    path = folder / "registry.toml"
    path.write_text(f"[settings]\n{settings}\n\n{kinds}")
    return path


@pytest.fixture(scope="module")
def refusing_conn(pg_server_url: str, template_db: str) -> Iterator[psycopg.Connection]:
    """One database for every case below: each is refused and changes nothing (checked)."""
    name = f"t_{uuid.uuid4().hex}"
    url = db.create_database(pg_server_url, name, template=template_db)
    try:
        with db.connect(url) as connection:
            yield connection
    finally:
        db.drop_database(pg_server_url, name)


def _sql_verdict(conn: psycopg.Connection, settings: dict, kinds: dict) -> str:
    with pytest.raises(psycopg.Error) as info:
        conn.execute("SELECT * FROM tickq.sync_registry(%s)",
                     [Jsonb({"settings": settings, "kinds": kinds})])
    assert info.value.sqlstate == "TQ002", info.value
    return info.value.diag.message_primary or ""


@pytest.mark.parametrize("case", list(CASES))
def test_the_file_and_the_json_get_the_same_verdict(
    tmp_path: Path, refusing_conn: psycopg.Connection, case: str
) -> None:
    conn = refusing_conn
    settings_toml, kinds_toml, settings, kinds, kind, key = CASES[case]
    try:
        registry = load_registry(_file(tmp_path, settings_toml, kinds_toml))
    except RegistryError as shape:
        # Which schedule keys go together is also the file's shape (registry.schema.json,
        # which editors read): said there in the database's words.
        assert case in SHAPE_TOO, shape
        [problem] = shape.problems
    else:
        assert case not in SHAPE_TOO
        with pytest.raises(RegistryRefused) as info:
            registry_api.sync_registry(conn, registry)
        [problem] = info.value.problems
    sql_message = _sql_verdict(conn, settings, kinds)

    where = f'kind "{kind}", ' if kind else "settings, "
    assert sql_message == f'registry: {where}key "{key}": {problem.message}'
    assert problem.kind == kind
    assert problem.key == (None if key == "name" else key if kind else f"settings.{key}")
    assert conn.execute("SELECT count(*) FROM tickq.job_kind").fetchone() == (0,)


def test_a_weekday_range_in_the_file_is_the_days_it_spans(
    tmp_path: Path, conn: psycopg.Connection
) -> None:
    path = _file(tmp_path, "", AT + 'on = ["fri-mon", "wed"]\n')
    registry_api.sync_registry(conn, load_registry(path))
    assert conn.execute("SELECT on_days FROM tickq.job_kind WHERE name = 'a'").fetchone() == (
        [1, 3, 5, 6, 7],)


# ---------------------------------------------------------------- through the real CLI


def _one_line_failure(result: subprocess.CompletedProcess[str], status: int) -> list[str]:
    assert result.returncode == status, (result.returncode, result.stderr)
    assert "Traceback" not in result.stderr, result.stderr
    lines = result.stderr.strip().splitlines()
    assert lines and all(line.startswith("tickq: ") for line in lines), result.stderr
    return lines


def test_every_value_problem_is_listed_at_once_by_the_cli(tmp_path: Path, db_url: str) -> None:
    path = _file(tmp_path, 'slots = 2147483647\ntimezone = "localtime"',
                 "[kinds.a]\n" + KIND + "retries = 2147483647\n\n[kinds.Bad]\n" + KIND)
    lines = _one_line_failure(tickq("sync", "--registry", str(path), "--database-url", db_url), 2)
    assert lines[-1] == "tickq: invalid registry: 4 problem(s)"
    text = "\n".join(lines)
    assert 'key "settings.slots": must be a whole number from 1 to 1000, got 2147483647' in text
    assert 'key "settings.timezone": unknown time zone "localtime"' in text
    assert 'kind "a", key "retries": must be a whole number from 0 to 100' in text
    assert 'kind "Bad": a kind name is' in text


def test_a_chains_rules_are_the_databases_and_name_the_kind_and_the_key(
    tmp_path: Path, db_url: str
) -> None:
    """A chain whose timeout is shorter than its steps' and whose step names repeat: refused by
    the database (registry/build.py reads the shape only), one line each, naming file, kind and
    key, as the file's own check did."""
    steps = "".join(f'[[kinds.core.steps]]\nname = "{name}"\ncommand = ["true"]\n'
                    f'timeout = "{timeout}"\n' for name, timeout in (
                        ("sf_pull", "25m"), ("sf_pull", "3m"), ("ingest", "1m"), ("ingest", "2m")))
    path = _file(tmp_path, "", '[kinds.core]\nevery = "1h"\ntimeout = "29m"\n' + steps)
    lines = _one_line_failure(tickq("check", "--registry", str(path), "--database-url", db_url), 2)
    assert lines == [
        f'tickq: {path}: kind "core", key "steps": step names "ingest", "sf_pull" are used twice',
        f'tickq: {path}: kind "core", key "timeout": a chain\'s timeout must not be shorter than '
        "the sum of its steps' (31m), got 29m",
        "tickq: invalid registry: 2 problem(s)"], lines


@pytest.mark.parametrize("command", ["check", "simulate"])
def test_check_and_simulate_report_a_refused_registry_in_one_line(
    tmp_path: Path, db_url: str, command: str
) -> None:
    path = _file(tmp_path, 'timezone = "localtime"', "[kinds.a]\n" + KIND)
    args = [command, "--registry", str(path), "--database-url", db_url]
    if command == "simulate":
        args += ["--hours", "1"]
    lines = _one_line_failure(tickq(*args), 2)
    assert len(lines) == 2 and 'key "settings.timezone"' in lines[0], lines


def test_an_empty_registry_is_refused_unless_allowed(
    tmp_path: Path, db_url: str, conn: psycopg.Connection
) -> None:
    # The same file, first with a kind, then emptied (another file's sync would be another
    # registry's, refused for another reason: tests_py/test_projects.py).
    path = _file(tmp_path, "slots = 3", "[kinds.a]\n" + KIND)
    assert tickq("sync", "--registry", str(path), "--database-url", db_url).returncode == 0
    path = _file(tmp_path, "slots = 3", "")

    for command in ("tick", "sync"):
        lines = _one_line_failure(
            tickq(command, "--registry", str(path), "--database-url", db_url), 2)
        assert len(lines) == 1 and "no kinds" in lines[0] and "--allow-empty" in lines[0]
    assert conn.execute("SELECT retired_at FROM tickq.job_kind WHERE name = 'a'").fetchone() == (
        None,)

    result = tickq("sync", "--allow-empty", "--registry", str(path), "--database-url", db_url)
    assert result.returncode == 0, result.stderr
    assert conn.execute(
        "SELECT retired_at IS NOT NULL FROM tickq.job_kind WHERE name = 'a'").fetchone() == (True,)


def test_dev_zero_is_refused_at_once(tmp_path: Path) -> None:
    # (reading /dev/zero to its end would never end: tickq()'s 30 s would fail the test)
    lines = _one_line_failure(tickq("tick", "--registry", "/dev/zero", timeout=30), 2)
    assert "not a regular file (a character device)" in lines[0]


def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path: Path) -> None:
    fifo = tmp_path / "registry.toml"
    os.mkfifo(fifo)
    lines = _one_line_failure(tickq("tick", "--registry", str(fifo), timeout=30), 2)
    assert "not a regular file (a FIFO)" in lines[0]


def test_a_directory_is_refused(tmp_path: Path) -> None:
    lines = _one_line_failure(tickq("sync", "--registry", str(tmp_path)), 2)
    assert "not a regular file (a directory)" in lines[0]


def test_a_registry_larger_than_a_mebibyte_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "registry.toml"
    path.write_text("# padding\n" * 120_000)
    lines = _one_line_failure(tickq("sync", "--registry", str(path)), 2)
    assert "larger than 1048576 bytes" in lines[0]


def test_an_unreadable_registry_exits_2(tmp_path: Path) -> None:
    path = _file(tmp_path, "", "[kinds.a]\n" + KIND)
    path.chmod(0)
    prefix: list[str] = []
    if os.geteuid() == 0:
        # Root reads any file; without the capabilities that let it, it is refused like anyone.
        caps = "-dac_override,-dac_read_search"
        prefix = ["setpriv", f"--inh-caps={caps}", f"--bounding-set={caps}"]
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    env["PYTHONPATH"] = str(REPO / "python_runner")
    result = subprocess.run([*prefix, sys.executable, "-m", "tickq.cli", "sync", "--registry",
                             str(path)], env=env, capture_output=True, text=True, timeout=60)
    lines = _one_line_failure(result, 2)
    assert "cannot read: Permission denied" in lines[0], lines


def test_a_read_only_database_exits_3_in_one_line(
    tmp_path: Path, db_url: str, conn: psycopg.Connection
) -> None:
    conn.execute("SELECT tickq.sync_registry('{\"kinds\": {}}')")  # migrated and synced once
    name = conn.info.dbname
    conn.execute(f'ALTER DATABASE "{name}" SET default_transaction_read_only = on')
    path = _file(tmp_path, "", "[kinds.a]\n" + KIND)
    lines = _one_line_failure(tickq("sync", "--registry", str(path), "--database-url", db_url), 3)
    assert len(lines) == 1 and "read-only" in lines[0], lines
    conn.execute(f'ALTER DATABASE "{name}" RESET default_transaction_read_only')


def test_registry_json_is_what_the_file_says(tmp_path: Path) -> None:
    # The schedule keys go to the database as written, so it can judge them (repeated days).
    at = KIND.replace('every = "5m"', 'at = "06:00"')
    registry = load_registry(_file(tmp_path, "", "[kinds.a]\n" + at + 'on = ["mon", "mon"]\n'))
    assert json.loads(json.dumps(registry.to_sync_json()))["kinds"]["a"]["on"] == ["mon", "mon"]
