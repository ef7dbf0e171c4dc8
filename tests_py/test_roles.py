"""Least privilege, end to end: the owner migrates, the dispatcher ticks, the reader reads.

The three roles are made by `tickq roles print` (sql/roles.sql) run as a superuser in a fresh
database, with names unique to the test (one of them with a quote and a space, to prove the
names reach SQL only quoted), and dropped afterwards. Ticks and runs are real `tickq`
subprocesses whose URL names the dispatcher role.
"""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path

import psycopg
import pytest
from dbroles import Roles

from tickq import db
from tickq.db.api.roles import roles_script

TICKQ = [sys.executable, "-m", "tickq.cli"]
QUERIES = Path(db.__file__).parent / "queries"
# simulate runs in a scratch database its caller creates and migrates, never in the queue's.
# Queries sent only to the scratch database `check` and `simulate` create (and so own).
NOT_THE_DISPATCHERS = {
    "save_agent_fields", "simulate_events", "simulate_window",
    "simulation_fold_all", "simulation_merge", "simulation_merge_repeat", "simulation_parts",
    "simulation_replay_window", "simulation_window_repeats",
    "simulation_start", "scratch_lean", "scratch_unlogged", "scratch_seed", "scratch_reset",
    "scratch_state", "scratch_restore", "capacity_lanes", "capacity_verdict_of",
    "simulation_windows",
    "simulation_worst",
    "spread_offsets", "spread_times",
}


def tickq(*args: str, url: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*TICKQ, *args, "--database-url", url], cwd=cwd, capture_output=True, text=True, timeout=60,
        check=False,
    )


def write_registry(folder: Path) -> Path:
    """Two kinds due at their first tick, hourly after that: a tick that crosses a minute
    boundary claims no second slot of either."""
    path = folder / "registry.toml"
    path.write_text(textwrap.dedent("""
        [settings]
        slots = 2
        tick = "1m"
        lease_margin = "10s"
        alert_command = ["cat"]
        alert_after = 1

        [kinds.works]
        command = ["sh", "-c", "echo works"]
        every = "1h"
        timeout = "10s"

        [kinds.fails]
        command = ["sh", "-c", "echo no; exit 3"]
        every = "1h"
        timeout = "10s"
    """))
    return path


def test_owner_migrates_dispatcher_ticks_reader_reads(roles: Roles, tmp_path: Path) -> None:
    registry = str(write_registry(tmp_path))
    owner, dispatcher = roles.url(roles.owner), roles.url(roles.dispatcher)
    reader = roles.url(roles.reader)

    # Before the owner migrates, the dispatcher cannot: one line, exit 3, no traceback.
    done = tickq("tick", "--registry", registry, url=dispatcher, cwd=tmp_path)
    assert done.returncode == 3, done
    assert "run `tickq migrate` as the schema's owner" in done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1

    done = tickq("migrate", url=owner, cwd=tmp_path)
    assert done.returncode == 0 and "migration 0100_baseline.sql" in done.stdout, done
    # The schema is current: the dispatcher's migrate is a read, not an attempt at DDL.
    done = tickq("migrate", url=dispatcher, cwd=tmp_path)
    assert (done.returncode, done.stdout.strip()) == (0, "up to date"), done

    # Running the script again changes nothing that matters (it is what adds a role later).
    with db.connect(roles.admin_url) as admin:
        admin.execute(roles_script(roles.owner, roles.dispatcher, roles.reader))  # type: ignore

    # Not even the migrator's lock: a tick goes through while another session holds it.
    with db.connect(roles.admin_url) as admin:
        admin.execute("SELECT pg_advisory_lock(hashtext(%s))", (db.MIGRATE_LOCK_KEY,))
        done = tickq("tick", "--registry", registry, url=dispatcher, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "alert.sent kind=fails" in done.stdout
    done = tickq("run", "works", "--registry", registry, url=dispatcher, cwd=tmp_path)
    assert done.returncode == 0 and done.stdout == "works\n", done  # the log goes to stderr
    done = tickq("status", "--registry", registry, url=reader, cwd=tmp_path)
    assert done.returncode == 0 and re.search(r"^fails .* failed", done.stdout, re.M), done

    with db.connect(roles.admin_url) as admin:
        runs = admin.execute(
            "SELECT kind, run_trigger::text, outcome::text, dispatcher FROM tickq.job_run"
        ).fetchall()
    assert sorted((k, t, o) for k, t, o, _d in runs) == [
        ("fails", "schedule", "failed"), ("tickq.housekeeping", "schedule", "ok"),
        ("works", "manual", "ok"), ("works", "schedule", "ok"),
    ], runs

    with db.connect(dispatcher) as conn:
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="job_kind"):
            conn.execute("UPDATE tickq.job_kind SET enabled = false")
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="job_run"):
            conn.execute("SELECT count(*) FROM tickq.job_run")
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="expire_leases"):
            conn.execute("SELECT * FROM tickq.expire_leases()")
    with db.connect(reader) as conn:
        kinds = {r[0] for r in conn.execute("SELECT kind FROM tickq.queue_status").fetchall()}
        assert kinds == {"works", "fails", "tickq.housekeeping"}
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="claim_jobs"):
            conn.execute("SELECT * FROM tickq.claim_jobs(1, 'reader')")
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="job_kind"):
            conn.execute("SELECT count(*) FROM tickq.job_kind")


def test_grants_survive_the_api_being_reapplied(roles: Roles, tmp_path: Path) -> None:
    """API files drop and recreate functions and views (report_run, queue_status): the migrator
    gives the roles their privileges again each time, and creates them as the owner even when
    a superuser runs it."""
    registry = str(write_registry(tmp_path))
    owner, dispatcher = roles.url(roles.owner), roles.url(roles.dispatcher)
    assert tickq("migrate", url=owner, cwd=tmp_path).returncode == 0
    with db.connect(owner) as conn:
        conn.execute("UPDATE tickq.api_checksum SET checksum = 'an older tickq'")
    done = tickq("tick", "--registry", registry, url=dispatcher, cwd=tmp_path)
    assert done.returncode == 3 and "may not migrate" in done.stderr, done
    # An administrator migrates this time: as the owner, so the owner keeps owning everything.
    done = tickq("migrate", url=roles.admin_url, cwd=tmp_path)
    assert done.returncode == 0 and done.stdout.startswith("api "), done
    with db.connect(roles.admin_url) as admin:
        strays = admin.execute(
            "SELECT p.oid::regprocedure::text FROM pg_proc AS p"
            " INNER JOIN pg_namespace AS n ON p.pronamespace = n.oid"
            " WHERE n.nspname = 'tickq' AND p.proowner <> n.nspowner"
            " UNION ALL SELECT c.relname FROM pg_class AS c"
            " INNER JOIN pg_namespace AS n ON c.relnamespace = n.oid"
            " WHERE n.nspname = 'tickq' AND c.relowner <> n.nspowner"
        ).fetchall()
    assert strays == []
    done = tickq("tick", "--registry", registry, url=dispatcher, cwd=tmp_path)
    assert done.returncode == 0 and "run.finished kind=works" in done.stdout, done


def test_every_query_the_runner_sends_is_the_dispatchers_to_send(roles: Roles) -> None:
    """A function or view another change adds to python_runner/tickq/db/queries must be granted in
    sql/api/99_privileges.sql, or ticks fail only where roles are used."""
    with db.connect(roles.url(roles.owner)) as conn:
        db.migrate(conn)
        denied = []
        for path in sorted(QUERIES.glob("*.sql")):
            if path.stem in NOT_THE_DISPATCHERS:
                continue
            for name in set(re.findall(r"\btickq\.(\w+)", path.read_text())):
                allowed = conn.execute(
                    """
                    SELECT coalesce(
                        (SELECT bool_or(has_function_privilege(%(role)s, p.oid, 'EXECUTE'))
                         FROM pg_proc AS p
                         WHERE p.pronamespace = 'tickq'::regnamespace AND p.proname = %(name)s),
                        (SELECT has_table_privilege(%(role)s, c.oid, 'SELECT') FROM pg_class AS c
                         WHERE c.relnamespace = 'tickq'::regnamespace AND c.relname = %(name)s),
                        (SELECT has_type_privilege(%(role)s, t.oid, 'USAGE') FROM pg_type AS t
                         WHERE t.typnamespace = 'tickq'::regnamespace AND t.typname = %(name)s))
                    """,
                    {"role": roles.dispatcher, "name": name},
                ).fetchone()[0]
                if not allowed:
                    denied.append(f"{path.name}: tickq.{name}")
    assert not denied, denied


def test_roles_print_refuses_names_that_cannot_be_roles() -> None:
    done = subprocess.run([*TICKQ, "roles", "print", "--owner", "x", "--reader", "x"],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 2 and "three different roles" in done.stderr
    done = subprocess.run([*TICKQ, "roles", "print", "--dispatcher", "d" * 64],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 2 and "1 to 63 bytes" in done.stderr
    script = roles_script("o", "d'); DROP TABLE x; --", "r")
    assert "SELECT set_config('tickq.roles_dispatcher', 'd''); DROP TABLE x; --', false);" in script
