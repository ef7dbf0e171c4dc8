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
from tickq.check import simulate
from tickq.db import scratch
from tickq.registry import load_registry

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
        spares = scratch.spare_prefix(role[0])
        assert template.startswith("tickq_scratch_template_")
        # a template and a spare left by an older schema, as an older tickq would have named them
        stale = "tickq_scratch_template_000000000000"
        stale_spare = "tickq_scratch_spare_000000000000_00000000_000000000000"
        for old, mark in ((stale, "tickq scratch template"), (stale_spare, "tickq scratch spare")):
            admin.execute(f"DROP DATABASE IF EXISTS {old}")
            admin.execute(f"CREATE DATABASE {old}")
            admin.execute(f"COMMENT ON DATABASE {old} IS '{mark}'")
        # a user's databases whose names only look like tickq's are never touched (no mark)
        mine = {"tickq_scratch_template_mine", f"{spares}mine"}
        for name in mine:
            admin.execute(f"DROP DATABASE IF EXISTS {name}")
            admin.execute(f"CREATE DATABASE {name}")

        def names() -> set[str]:
            return {r[0] for r in admin.execute(
                "SELECT datname FROM pg_database WHERE datname LIKE 'tickq_scratch%'")}

        def oid(name: str = template) -> int:
            row = admin.execute("SELECT oid FROM pg_database WHERE datname = %s",
                                (name,)).fetchone()
            assert row is not None, names()
            return int(row[0])

        def spares_now() -> set[str]:
            return {n for n in names() if n.startswith(spares)} - mine

        try:
            first = tickq("check", "--registry", str(registry), "--database-url", db_url)
            assert first.returncode == 0, first.stdout + first.stderr
            kept = oid()
            # no scratch left, at most one spare of this schema; the older schema's spare gone,
            # the look-alikes kept
            assert names() - spares_now() == {template} | mine
            assert len(spares_now()) <= 1, spares_now()
            again = tickq("simulate", "--registry", str(registry), "--hours", "1",
                          "--database-url", db_url)
            assert again.returncode == 0, again.stdout + again.stderr
            assert oid() == kept  # reused, not rebuilt
            assert names() - spares_now() == {template} | mine  # no scratch left
        finally:
            for name in (*mine, stale, stale_spare):
                admin.execute(f"DROP DATABASE IF EXISTS {name}")


def test_a_check_leaves_one_spare_and_the_next_takes_it_as_a_fresh_copy(
    pg_server_url: str
) -> None:
    # Windows simulated beside each other: when the first ends, a spare copy of the template is
    # made for the next check (one, only when none is there). The next scratch database is that
    # spare renamed (the same database), and holds what a fresh copy holds.
    with psycopg.connect(pg_server_url, autocommit=True) as admin:
        role = admin.execute("SELECT current_user").fetchone()
        assert role is not None
        prefix = scratch.spare_prefix(role[0])

        def spares() -> dict[str, int]:
            return {r[0]: r[1] for r in admin.execute(
                "SELECT datname, oid FROM pg_database WHERE starts_with(datname, %s)"
                " AND shobj_description(oid, 'pg_database') = 'tickq scratch spare'",
                (prefix,))}

        with scratch.scratch(pg_server_url, db.DEFAULT_TIMEOUTS):
            pass  # the template is there now
        for name in spares():
            admin.execute(f"DROP DATABASE {name}")
        with scratch.scratch(pg_server_url, db.DEFAULT_TIMEOUTS):
            pass
        assert spares() == {}  # a scratch database alone leaves none (no core to spare)
        registry = load_registry(REPO / "examples" / "starvation" / "real_fix.toml")
        with simulate.scratch(pg_server_url, 2) as sims:
            result = simulate.evaluate(sims, registry, None, jobs=2)
        assert len(result.windows) == 2
        left = spares()
        assert len(left) == 1, left
        scratch.Spare(pg_server_url).join()
        assert spares() == left  # made only when none is there
        with scratch.scratch(pg_server_url, db.DEFAULT_TIMEOUTS) as conn:
            taken = admin.execute("SELECT oid FROM pg_database WHERE datname = %s",
                                  (conn.info.dbname,)).fetchone()
            assert taken == (next(iter(left.values())),)  # the spare, renamed
            rows = conn.execute(
                "SELECT c.relname FROM pg_class AS c JOIN pg_namespace AS n"
                " ON n.oid = c.relnamespace WHERE n.nspname = 'tickq' AND c.relkind = 'r'"
                " AND c.relpersistence = 'u' ORDER BY 1").fetchall()
            tables = [r[0] for r in rows]
            assert "job_run" in tables and "job_kind" in tables
            for table in tables:
                found = conn.execute(f"SELECT count(*) FROM tickq.{table}").fetchone()
                assert found is not None
                assert found[0] == (3 if table == "slot" else 0), table
        assert spares() == {}


def test_a_check_stopped_while_its_worst_case_runs_ends_at_once_and_leaves_no_scratch(
    tmp_path: Path, db_url: str, pg_server_url: str
) -> None:
    # The worst case runs in a thread beside the capacity questions; ^C must still stop the
    # simulation in the scratch database (not wait for its week) and drop every copy.
    # a week of 100 kinds every 5 minutes in 10 slots: about 30 s of simulation, if not stopped
    lines = ['[settings]\nslots = 10\nstale_after = "15m"\n',
             '[kinds.weekly]\ncommand = ["true"]\nat = "03:00"\non = ["mon"]\ntimeout = "1m"\n']
    lines += [f'[kinds.k{i:02d}]\ncommand = ["true"]\nevery = "5m"\ntimeout = "1m"\n'
              for i in range(100)]
    registry = tmp_path / "week.toml"
    registry.write_text("\n".join(lines))
    check = subprocess.Popen(
        [sys.executable, "-m", "tickq.cli", "check", "--registry", str(registry),
         "--database-url", db_url], env=tickq_env(), stdout=subprocess.PIPE,
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
            stopped = time.monotonic()
            _, err = check.communicate(timeout=60)
            assert check.returncode == 128 + signal.SIGINT, err
            assert time.monotonic() - stopped < 5, "the simulation ran on after ^C"
            left = {r[0] for r in admin.execute(
                "SELECT datname FROM pg_database WHERE datname = ANY(%s)", (list(seen),))}
            assert not left, left
            assert "Traceback" not in err, err
    finally:
        check.kill()
        check.communicate()
