"""`tickq check` and `tickq simulate` model the registry file they are given: its kinds, and the
queue's agents only when the file has an [agents] section (a dispatcher runs no agent without
one), in the lane that section gives them. Another project's agents in the same database must
not reach the verdict: the same file gets the same verdict on a laptop and in CI.

The scratch database they simulate in is a copy of a migrated template kept on the server while
the schema is unchanged, named so it cannot be a user's, and dropped when its schema is stale.

Real `tickq` subprocesses against a real PostgreSQL (tests_py/conftest.py).
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import psycopg
from processes import tickq, tickq_env

from tickq import db
from tickq.db import scratch

REPO = Path(__file__).resolve().parent.parent

WITH_AGENTS = """\
[settings]
slots = 1
stale_after = "15m"

[kinds.tidy]
command = ["true"]
every = "1h"
timeout = "1m"

[agents]
base_url = "http://127.0.0.1:9/v1"
model = "m"
priority = "low"
"""

# Another project: one slot, one kind that fits it alone.
WITHOUT_AGENTS = """\
[settings]
slots = 1
stale_after = "15m"

[kinds.only]
command = ["true"]
every = "15m"
timeout = "1m"
"""


def with_three_agents(tmp_path: Path, db_url: str) -> Path:
    """A queue holding three agents of the project whose registry is returned (lane low), each
    every 5 minutes with a 10-minute watchdog: far more than one slot holds."""
    registry = tmp_path / "agents.toml"
    registry.write_text(WITH_AGENTS)
    for name in ("brief", "digest", "triage"):
        done = tickq("agent", "add", name, "--prompt", "-", "--every", "5m", "--registry",
                     str(registry), "--database-url", db_url, input="Summarise the day")
        assert done.returncode == 0, done.stderr
    return registry


def lanes_of_agents(stdout: str) -> set[tuple[str, str]]:
    """(kind, lane) of every table row that names an agent's kind."""
    return {(row.split()[0], row.split()[1]) for row in stdout.splitlines()
            if row.startswith("agent.")}


def verdict(stdout: str) -> list[str]:
    """The lines that say whether the capacity and the worst case fit."""
    return [line for line in stdout.splitlines() if line.startswith(("capacity", "worst case"))]


def test_check_of_a_registry_without_agents_ignores_the_databases_agents(
    tmp_path: Path, db_url: str, pg_server_url: str, template_db: str
) -> None:
    with_three_agents(tmp_path, db_url)
    other = tmp_path / "other.toml"
    other.write_text(WITHOUT_AGENTS)
    # the same file where the database holds nothing else (a CI job's)
    empty = f"t_{uuid.uuid4().hex}"
    empty_url = db.create_database(pg_server_url, empty, template=template_db)
    try:
        done = tickq("check", "--registry", str(other), "--database-url", db_url)
        clean = tickq("check", "--registry", str(other), "--database-url", empty_url)
    finally:
        db.drop_database(pg_server_url, empty)
    assert "agent." not in done.stdout, done.stdout
    assert done.returncode == clean.returncode == 0, done.stdout + done.stderr
    assert verdict(done.stdout) == verdict(clean.stdout)

    done = tickq("simulate", "--registry", str(other), "--hours", "2", "--database-url", db_url)
    assert "agent." not in done.stdout, done.stdout
    assert done.returncode == 0, done.stdout + done.stderr


def test_check_of_a_registry_with_agents_puts_them_in_its_lane(
    tmp_path: Path, db_url: str
) -> None:
    registry = with_three_agents(tmp_path, db_url)
    done = tickq("check", "--registry", str(registry), "--database-url", db_url)
    agents = {"agent.brief", "agent.digest", "agent.triage"}
    assert lanes_of_agents(done.stdout) == {(name, "low") for name in agents}, done.stdout
    # listed in both tables: capacity and the worst case
    assert sum(row.startswith("agent.") for row in done.stdout.splitlines()) == 6, done.stdout
    done = tickq("simulate", "--registry", str(registry), "--hours", "2", "--database-url", db_url)
    assert lanes_of_agents(done.stdout) == {(name, "low") for name in agents}, done.stdout


def test_scratch_template_is_kept_while_the_schema_is_unchanged(
    tmp_path: Path, db_url: str, pg_server_url: str
) -> None:
    registry = tmp_path / "other.toml"
    registry.write_text(WITHOUT_AGENTS)
    with psycopg.connect(pg_server_url, autocommit=True) as admin:
        role = admin.execute("SELECT current_user").fetchone()
        assert role is not None
        template = scratch.template_name(role[0])
        assert template.startswith("tickq_scratch_template_")
        # a template left by an older schema, as an older tickq would have named it
        stale = "tickq_scratch_template_000000000000"
        admin.execute(f"DROP DATABASE IF EXISTS {stale}")
        admin.execute(f"CREATE DATABASE {stale}")
        admin.execute(f"COMMENT ON DATABASE {stale} IS 'tickq scratch template'")
        # a user's database whose name only looks like one is never touched
        admin.execute("DROP DATABASE IF EXISTS tickq_scratch_template_mine")
        admin.execute("CREATE DATABASE tickq_scratch_template_mine")

        def names() -> set[str]:
            # the pool databases are kept too (tests_py/test_scratch_pool.py)
            return {r[0] for r in admin.execute(
                "SELECT datname FROM pg_database WHERE datname LIKE 'tickq_scratch%'")
                if not r[0].startswith(scratch.POOL_PREFIX)}

        def oid() -> int:
            row = admin.execute("SELECT oid FROM pg_database WHERE datname = %s",
                                (template,)).fetchone()
            assert row is not None, names()
            return int(row[0])

        try:
            first = tickq("check", "--registry", str(registry), "--database-url", db_url)
            assert first.returncode == 0, first.stdout + first.stderr
            kept = oid()
            assert names() == {template, "tickq_scratch_template_mine"}
            again = tickq("simulate", "--registry", str(registry), "--hours", "1",
                          "--database-url", db_url)
            assert again.returncode == 0, again.stdout + again.stderr
            assert oid() == kept  # reused, not rebuilt
            assert names() == {template, "tickq_scratch_template_mine"}  # no scratch left
        finally:
            admin.execute("DROP DATABASE IF EXISTS tickq_scratch_template_mine")
            admin.execute(f"DROP DATABASE IF EXISTS {stale}")


def test_a_check_stopped_while_its_worst_case_runs_ends_at_once_and_leaves_no_scratch(
    tmp_path: Path, db_url: str, pg_server_url: str
) -> None:
    # The worst case runs in a thread beside the capacity questions; ^C must still stop the
    # simulation in the scratch database (not wait for its week) and drop every copy of its
    # own; the pool databases it held stay, to be put back by the next check.
    # a week of 100 kinds every 13 minutes in 10 slots: minutes of simulation, if not stopped (no
    # day repeats another: a day is no whole number of 13 minutes)
    lines = ['[settings]\nslots = 10\nstale_after = "15m"\n',
             '[kinds.weekly]\ncommand = ["true"]\nat = "03:00"\non = ["mon"]\ntimeout = "1m"\n']
    lines += [f'[kinds.k{i:02d}]\ncommand = ["true"]\nevery = "13m"\ntimeout = "1m"\n'
              for i in range(100)]
    registry = tmp_path / "week.toml"
    registry.write_text("\n".join(lines))
    # The simulator's calm stretches (no kind waiting between the 13-minute bursts) would
    # simulate that week in seconds and could end before the signal: the real loop, everywhere.
    real_loop = f"{db_url} options='-c tickq.simulator_calm=off'"
    check = subprocess.Popen(
        [sys.executable, "-m", "tickq.cli", "check", "--registry", str(registry),
         "--database-url", real_loop], env=tickq_env(), stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True)
    seen: set[str] = set()
    try:
        with psycopg.connect(pg_server_url, autocommit=True) as admin:
            deadline = time.monotonic() + 60
            while not seen and time.monotonic() < deadline and check.poll() is None:
                seen = {r[0] for r in admin.execute(
                    "SELECT datname FROM pg_stat_activity WHERE datname LIKE 'tickq_scratch_%%'"
                    " AND query LIKE 'CALL tickq.simulate_window%%' AND state = 'active'")}
                time.sleep(0.02)
            assert seen, "no simulation seen running"
            check.send_signal(signal.SIGINT)
            _, err = check.communicate(timeout=60)
            # 130, not the verdict of a simulation that ran on to its end (0 or 1)
            assert check.returncode == 128 + signal.SIGINT, err
            left = {r[0] for r in admin.execute(
                "SELECT datname FROM pg_database WHERE datname = ANY(%s)", (list(seen),))}
            assert all(name.startswith(scratch.POOL_PREFIX) for name in left), left
            held = admin.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = ANY(%s)",
                (list(seen),)).fetchone()
            deadline = time.monotonic() + 10
            while held != (0,) and time.monotonic() < deadline:  # their backends end
                time.sleep(0.05)
                held = admin.execute(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = ANY(%s)",
                    (list(seen),)).fetchone()
            assert held == (0,), "a stopped check still holds its scratch databases"
            assert "Traceback" not in err, err
    finally:
        check.kill()
        check.communicate()
