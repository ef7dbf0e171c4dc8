"""tickq.db.migrate: idempotent, safe under concurrent migrators, errors name the file."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from tickq import db
from tickq.db import baseline


def _write_sql_dir(root: Path, migrations: dict[str, str], api: dict[str, str]) -> Path:
    for folder, files in (("migrations", migrations), ("api", api)):
        (root / folder).mkdir(parents=True, exist_ok=True)
        for name, text in files.items():
            (root / folder / name).write_text(text)
    return root


@pytest.fixture
def toy_sql(tmp_path: Path) -> Path:
    """A small sql/ folder, so these tests mean something whatever the real sql/ holds."""
    return _write_sql_dir(
        tmp_path / "sql",
        {
            "0001_first.sql": "CREATE TABLE tickq.toy (id int PRIMARY KEY);\n"
            "INSERT INTO tickq.toy VALUES (1);",
            "0002_second.sql": "ALTER TABLE tickq.toy ADD COLUMN label text;",
        },
        {
            "00_toy.sql": "CREATE OR REPLACE FUNCTION tickq.toy_count() RETURNS bigint\n"
            "LANGUAGE sql AS $$ SELECT count(*) FROM tickq.toy $$;",
        },
    )


def _recorded(url: str) -> list[tuple[int, str]]:
    with db.connect(url) as conn:
        return conn.execute("SELECT version, name FROM tickq.migration ORDER BY 1").fetchall()


@pytest.mark.parametrize("use_toy", [False, True], ids=["repo-sql", "toy-sql"])
def test_migrate_twice_is_a_noop(empty_db_url: str, toy_sql: Path, use_toy: bool) -> None:
    sql_dir = toy_sql if use_toy else None
    files = db.migration_files(sql_dir)
    with db.connect(empty_db_url) as conn:
        first = db.migrate(conn, sql_dir)
        assert first[: len(files)] == [f"migration {m.name}" for m in files]
        assert db.migrate(conn, sql_dir) == []
    assert _recorded(empty_db_url) == [(m.version, m.name) for m in files]


@pytest.mark.parametrize("use_toy", [False, True], ids=["repo-sql", "toy-sql"])
def test_concurrent_migrators_apply_each_file_once(
    empty_db_url: str, toy_sql: Path, use_toy: bool
) -> None:
    sql_dir = toy_sql if use_toy else None
    barrier = threading.Barrier(2)
    results: list[list[str]] = []
    errors: list[BaseException] = []

    def run() -> None:
        try:
            with db.connect(empty_db_url) as conn:
                barrier.wait(timeout=10)
                results.append(db.migrate(conn, sql_dir))
        except BaseException as exc:  # reported below, in the test's thread
            errors.append(exc)

    threads = [threading.Thread(target=run) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert errors == []
    assert len(results) == 2
    files = db.migration_files(sql_dir)
    applied = [line for r in results for line in r if line.startswith("migration ")]
    assert sorted(applied) == sorted(f"migration {m.name}" for m in files)
    assert _recorded(empty_db_url) == [(m.version, m.name) for m in files]


def test_failing_migration_names_its_file_and_rolls_back(empty_db_url: str, toy_sql: Path) -> None:
    (toy_sql / "migrations" / "0003_broken.sql").write_text(
        "CREATE TABLE tickq.half (id int);\n\nSELECT no_such_column FROM tickq.toy;\n"
    )
    with db.connect(empty_db_url) as conn:
        with pytest.raises(db.MigrationError, match=r"0003_broken\.sql:3: .*no_such_column"):
            db.migrate(conn, toy_sql)
        assert conn.execute("SELECT to_regclass('tickq.half')").fetchone() == (None,)
        # the whole upgrade rolled back: the migrations before it in the same run too
        assert conn.execute("SELECT to_regclass('tickq.toy')").fetchone() == (None,)
        # the lock was released: another session can migrate
        with db.connect(empty_db_url) as other:
            got = other.execute("SELECT pg_try_advisory_lock(hashtext('tickq.migrate'))").fetchone()
            assert got == (True,)
    assert _recorded(empty_db_url) == []
    (toy_sql / "migrations" / "0003_broken.sql").unlink()
    with db.connect(empty_db_url) as conn:
        applied = db.migrate(conn, toy_sql)
    assert applied[:2] == ["migration 0001_first.sql", "migration 0002_second.sql"]
    assert [v for v, _ in _recorded(empty_db_url)] == [1, 2]


def test_a_migration_and_the_api_that_follows_it_commit_together(
    empty_db_url: str, toy_sql: Path
) -> None:
    """A column renamed by a migration and a function naming it by its new name: no session may
    see the one without the other (the same transaction wrote both rows)."""
    with db.connect(empty_db_url) as conn:
        db.migrate(conn, toy_sql)
        (toy_sql / "migrations" / "0003_rename.sql").write_text(
            "ALTER TABLE tickq.toy RENAME COLUMN label TO title;")
        (toy_sql / "api" / "00_toy.sql").write_text(
            "CREATE OR REPLACE FUNCTION tickq.toy_count() RETURNS bigint\n"
            "LANGUAGE sql AS $$ SELECT count(title) FROM tickq.toy $$;")
        assert db.migrate(conn, toy_sql)[0] == "migration 0003_rename.sql"
        written = conn.execute(
            "SELECT (SELECT xmin::text FROM tickq.migration WHERE version = 3),"
            " (SELECT xmin::text FROM tickq.api_checksum)").fetchone()
        assert written[0] == written[1]
        assert conn.execute("SELECT tickq.toy_count()").fetchone() == (0,)


def test_api_is_reapplied_when_its_checksum_changes(empty_db_url: str, toy_sql: Path) -> None:
    with db.connect(empty_db_url) as conn:
        assert db.migrate(conn, toy_sql)[-1].startswith("api 1 files")
        assert db.migrate(conn, toy_sql) == []
        (toy_sql / "api" / "00_toy.sql").write_text(
            "CREATE OR REPLACE FUNCTION tickq.toy_count() RETURNS bigint\n"
            "LANGUAGE sql AS $$ SELECT count(*) + 100 FROM tickq.toy $$;"
        )
        assert db.migrate(conn, toy_sql)[-1].startswith("api 1 files")
        assert conn.execute("SELECT tickq.toy_count()").fetchone() == (101,)
        checksum = conn.execute("SELECT checksum FROM tickq.api_checksum").fetchone()
        assert checksum == (db.api_checksum(db.api_files(toy_sql)),)


def test_unknown_recorded_migration_is_refused(empty_db_url: str, toy_sql: Path) -> None:
    with db.connect(empty_db_url) as conn:
        db.migrate(conn, toy_sql)
        conn.execute("INSERT INTO tickq.migration (version, name) VALUES (9999, '9999_future.sql')")
        with pytest.raises(db.MigrationError, match="9999_future.sql"):
            db.migrate(conn, toy_sql)


def test_template_database_is_migrated(conn) -> None:
    files = db.migration_files()
    got = conn.execute("SELECT version FROM tickq.migration ORDER BY 1").fetchall()
    assert [v for (v,) in got] == [m.version for m in files]


def test_with_dbname_keeps_a_socket_host() -> None:
    url = db.with_dbname("postgresql://postgres:@/postgres?host=/tmp/x", "t_1")
    params = db.url_params(url)
    assert (params["host"], params["dbname"], params["user"]) == ("/tmp/x", "t_1", "postgres")
    env = db.libpq_env(url)
    assert env == {"PGHOST": "/tmp/x", "PGUSER": "postgres", "PGDATABASE": "t_1"}


def test_a_queue_of_the_old_chain_is_adopted_after_the_files_it_lacks() -> None:
    """A queue made before some of the chain's later files merged (0070-0073 came after 0085)
    runs them, from sql/chain/, before it is recorded as at the baseline."""
    shipped = {baseline.BASELINE_VERSION}
    recorded = {v: name for v, name in baseline.REPLACED.items() if v <= 65 or v == 85}
    adopt = baseline.adoption(recorded, shipped)
    assert adopt == baseline.Adoption(sorted(recorded), True, [
        "0070_simulation_from_states.sql", "0071_simulate_window_stops_stale.sql",
        "0072_run_counts.sql", "0073_metrics_kind.sql", "0090_no_dead_clock_parameters.sql"])
    assert all((db.sql_root() / "chain" / name).is_file() for name in adopt.catch_up)
    assert baseline.adoption(recorded, {1, 2}) == baseline.Adoption([], False, [])


def test_a_chain_file_recorded_under_another_name_is_refused() -> None:
    recorded = dict(baseline.REPLACED)
    recorded[72] = "0072_other.sql"
    expected = r"0072_other\.sql \(expected 0072_run_counts\.sql\)"
    with pytest.raises(db.MigrationError, match=expected):
        baseline.adoption(recorded, {baseline.BASELINE_VERSION})
