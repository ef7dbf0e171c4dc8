"""What a wake-up costs: the connections an idle tick opens and the rows it writes, a sync of
an unchanged registry that writes nothing and judges nothing again, the schema's checksum, and
a run's round trips (the modules a command imports: test_wake_up_imports.py)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from datetime import timedelta
from pathlib import Path

import psycopg
import pytest
from wake_up_costs import counting_calls, env, judged, registry, rows, sessions, tick, written

from tickq.db import migrator

# ---------------------------------------------------------------- one connection, no writes


def test_an_idle_tick_opens_one_connection_and_writes_only_its_tick_record(
    db_url: str, tmp_path: Path
) -> None:
    path = registry(tmp_path)
    tick(path, db_url)  # the first sync writes the kinds; housekeeping runs
    with psycopg.connect(db_url, autocommit=True) as conn:
        tick(path, db_url)  # reschedules nothing: the runs of the first left the kinds' rows
        started, before = sessions(conn), rows(conn)
        tick(path, db_url)
        assert sessions(conn) - started == 1
        assert written(before, rows(conn)) == ["dispatcher_tick"]


def test_an_idle_tick_on_the_embedded_default_opens_one_connection(
    pg_server_url: str, template_db: str, tmp_path: Path
) -> None:
    """No DATABASE_URL: the embedded server (here the tests' own, found by TICKQ_DATA_DIR) and
    its database tickq, reached without asking first whether that database exists."""
    if os.environ.get("DATABASE_URL") or os.environ.get("TICKQ_TEST_DOCKER") == "1":
        pytest.skip("the tests' server is not an embedded one")
    from tickq import db

    with psycopg.connect(pg_server_url, autocommit=True) as admin:
        pgdata = Path(admin.execute("SHOW data_directory").fetchone()[0])
    db.drop_database(pg_server_url, "tickq")
    url = db.create_database(pg_server_url, "tickq", template=template_db)
    path = registry(tmp_path)
    default = {**env(), "TICKQ_DATA_DIR": str(pgdata.parent)}
    argv = [sys.executable, "-m", "tickq.cli", "tick", "--registry", str(path)]
    try:
        for _ in range(2):
            done = subprocess.run(argv, env=default, capture_output=True, text=True, timeout=60)
            assert done.returncode == 0, done.stderr
        with psycopg.connect(url, autocommit=True) as conn:
            started = sessions(conn, server=True)
            done = subprocess.run(argv, env=default, capture_output=True, text=True, timeout=60)
            assert done.returncode == 0, done.stderr
            assert sessions(conn, server=True) - started == 1
    finally:
        db.drop_database(pg_server_url, "tickq")
        (pgdata.parent / "queue-database-made").unlink(missing_ok=True)


def test_a_row_changed_behind_the_registry_s_back_makes_the_next_sync_do_its_work(
    db_url: str, tmp_path: Path
) -> None:
    path = registry(tmp_path)
    tick(path, db_url)
    with psycopg.connect(db_url, autocommit=True) as conn:
        conn.execute("UPDATE tickq.job_kind SET timeout = '45s' WHERE name = 'k1'")
        done = subprocess.run(
            [sys.executable, "-m", "tickq.cli", "sync", "--registry", str(path),
             "--database-url", db_url], env=env(), capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        assert "kind=k1 field=timeout" in done.stdout + done.stderr
        assert conn.execute("SELECT timeout FROM tickq.job_kind WHERE name = 'k1'"
                            ).fetchone()[0] == timedelta(seconds=30)
        before = rows(conn)
        tick(path, db_url)
        assert written(before, rows(conn)) == ["dispatcher_tick"]


def test_an_edited_registry_is_synced_again(db_url: str, tmp_path: Path) -> None:
    path = registry(tmp_path)
    tick(path, db_url)
    path.write_text(path.read_text().replace('timeout = "30s"', 'timeout = "40s"'))
    tick(path, db_url)
    with psycopg.connect(db_url, autocommit=True) as conn:
        assert {t for (t,) in conn.execute(
            "SELECT timeout FROM tickq.job_kind WHERE name LIKE 'k%'")} == {timedelta(seconds=40)}


def test_an_idle_tick_does_not_judge_the_registry_it_synced_again(
    db_url: str, tmp_path: Path
) -> None:
    """The verdict on the registry's values (registry_problems) is the sync's: a tick of the
    registry the queue last synced from that file judges none of its kinds again."""
    path = registry(tmp_path, kinds=5)
    tick(path, db_url)
    with psycopg.connect(db_url, autocommit=True) as conn, counting_calls(conn):
        path.write_text(path.read_text().replace('timeout = "30s"', 'timeout = "40s"'))
        before = judged(conn)
        tick(path, db_url)  # an edited registry: each kind is judged
        edited = judged(conn)
        assert edited - before >= 5
        tick(path, db_url)
        assert judged(conn) == edited


def test_a_tick_s_sync_is_its_verdict(db_url: str, tmp_path: Path) -> None:
    """A tick asks for no verdict before its sync: the sync refuses what registry_problems
    would list (and only then asks it, to name each problem), so an idle tick calls
    registry_problems not at all, and a tick of a bad registry still exits 2 naming the key."""
    path = registry(tmp_path, kinds=3)
    tick(path, db_url)
    with psycopg.connect(db_url, autocommit=True) as conn:
        with counting_calls(conn):
            before = judged(conn, "registry_problems")
            tick(path, db_url)
            assert judged(conn, "registry_problems") == before
        path.write_text(path.read_text().replace('timeout = "30s"', 'timeout = "0s"', 1))
        done = subprocess.run(
            [sys.executable, "-m", "tickq.cli", "tick", "--registry", str(path),
             "--database-url", db_url], env=env(), capture_output=True, text=True, timeout=60)
        assert done.returncode == 2, done.stderr
        assert "k0" in done.stderr and "timeout" in done.stderr
        assert {t for (t,) in conn.execute(
            "SELECT timeout FROM tickq.job_kind WHERE name = 'k0'")} == {timedelta(seconds=30)}


# ---------------------------------------------------------------- the schema's checksum


def test_the_schema_check_does_not_read_the_sql_files(
    conn: psycopg.Connection, monkeypatch: pytest.MonkeyPatch
) -> None:
    migrator.expected_schema()  # known once (the package's files unchanged)
    read: list[str] = []
    real = Path.read_text

    def spy(self: Path, *args: object, **kwargs: object) -> str:
        read.append(self.name)
        return real(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Path, "read_text", spy)
    assert migrator.migrate(conn) == []
    assert [name for name in read if name.endswith(".sql")] == []


# ---------------------------------------------------------------- a run's round trips


def test_a_finish_is_reported_and_its_slot_refilled_in_one_transaction_without_a_savepoint(
    db_url: str, tmp_path: Path
) -> None:
    """Kind a's report and the claim of b that refills its slot write with one transaction id:
    no subtransaction (a savepoint and its release are two round trips per run)."""
    path = tmp_path / "registry.toml"
    path.write_text(textwrap.dedent("""\
        [settings]
        slots = 1

        [kinds.a]
        command = ["true"]
        every = "1h"
        timeout = "30s"
        priority = "urgent"

        [kinds.b]
        command = ["sh", "-c", "while [ ! -e GO ]; do sleep 0.02; done"]
        every = "1h"
        timeout = "30s"
        priority = "high"
    """).replace("GO", str(tmp_path / "go")))  # b runs until the test has looked
    tick = subprocess.Popen(
        [sys.executable, "-m", "tickq.cli", "tick", "--registry", str(path), "--database-url",
         db_url], env=env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        with psycopg.connect(db_url, autocommit=True) as conn:
            for _ in range(600):
                if conn.execute("SELECT 1 FROM tickq.job_run WHERE kind = 'b'"
                                " AND started_at IS NOT NULL").fetchone():
                    break
                time.sleep(0.05)
            else:
                raise AssertionError("b never started")
            xmins = dict(conn.execute("SELECT name, xmin::text FROM tickq.job_kind"
                                      " WHERE name IN ('a', 'b')").fetchall())
        assert xmins["a"] == xmins["b"]
    finally:
        (tmp_path / "go").touch()
        out, err = tick.communicate(timeout=60)
    assert tick.returncode == 0, err
