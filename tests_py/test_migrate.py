"""tickq.db.migrate: idempotent, safe under concurrent migrators, errors name the file."""

from __future__ import annotations

import re
import threading
import uuid
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
        # the lock was released: another session can migrate
        with db.connect(empty_db_url) as other:
            got = other.execute("SELECT pg_try_advisory_lock(hashtext('tickq.migrate'))").fetchone()
            assert got == (True,)
    assert [v for v, _ in _recorded(empty_db_url)] == [1, 2]


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


def test_an_api_file_may_change_a_return_type_or_drop_a_parameter(
    empty_db_url: str, toy_sql: Path
) -> None:
    """sql/api/00_api_begin.sql drops, before the files run, every function nothing depends
    on: CREATE OR REPLACE cannot change a return type, and a signature without a parameter
    beside the old one would make a call ambiguous. A function a view depends on is kept, and
    a grant to a role tickq does not manage is given again (99_privileges.sql)."""
    api = toy_sql / "api"
    for name in ("00_api_begin.sql", "99_privileges.sql"):
        api.joinpath(name).write_text((db.sql_root() / "api" / name).read_text(encoding="utf-8"))
    monitor = f"tickq_monitor_{uuid.uuid4().hex[:8]}"
    api.joinpath("01_label.sql").write_text(
        "CREATE OR REPLACE FUNCTION tickq.toy_label(p_id int, p_now timestamptz DEFAULT now())\n"
        "RETURNS text LANGUAGE sql AS $$ SELECT 'toy ' || p_id $$;\n"
        "CREATE OR REPLACE FUNCTION tickq.toy_double(p_id int) RETURNS int\n"
        "LANGUAGE sql IMMUTABLE AS $$ SELECT p_id * 2 $$;")
    toy_sql.joinpath("migrations", "0003_view.sql").write_text(
        "CREATE FUNCTION tickq.toy_double(p_id int) RETURNS int LANGUAGE sql AS $$ SELECT 0 $$;\n"
        "CREATE VIEW tickq.toy_doubled AS SELECT tickq.toy_double(id) AS doubled FROM tickq.toy;")
    with db.connect(empty_db_url) as conn:
        db.migrate(conn, toy_sql)
        conn.execute(f"CREATE ROLE {monitor}")
        conn.execute(f"GRANT EXECUTE ON FUNCTION tickq.toy_count() TO {monitor}")
        api.joinpath("00_toy.sql").write_text(
            "CREATE OR REPLACE FUNCTION tickq.toy_count() RETURNS integer\n"
            "LANGUAGE sql AS $$ SELECT count(*)::integer FROM tickq.toy $$;")
        api.joinpath("01_label.sql").write_text(
            api.joinpath("01_label.sql").read_text().replace(
                "p_id int, p_now timestamptz DEFAULT now()", "p_id int").replace("* 2", "* 3"))
        try:
            assert db.migrate(conn, toy_sql)[-1].startswith("api 4 files")
            got = conn.execute(
                "SELECT pg_typeof(tickq.toy_count())::text, tickq.toy_label(1),"
                " (SELECT doubled FROM tickq.toy_doubled),"
                " array(SELECT p.oid::regprocedure::text FROM pg_proc AS p"
                "       WHERE p.proname = 'toy_label'),"
                " has_function_privilege(%s, 'tickq.toy_count()', 'EXECUTE')",
                (monitor,)).fetchone()
        finally:
            conn.execute(f"DROP OWNED BY {monitor}")
            conn.execute(f"DROP ROLE {monitor}")
    assert got == ("integer", "toy 1", 3, ["tickq.toy_label(integer)"], True)


def test_migrations_after_the_baseline_change_tables_only() -> None:
    """Functions and views are the API files' (re-applied by checksum, old signatures dropped
    by 00_api_begin.sql and 99_privileges.sql); a migration after the baseline changes tables,
    types and constraints, so no migration need be read to know what a function does today."""
    routine = re.compile(r"\b(CREATE|DROP|ALTER)\s+(OR\s+REPLACE\s+)?"
                         r"(FUNCTION|PROCEDURE|ROUTINE|VIEW)\b", re.IGNORECASE)
    later = [m for m in db.migration_files() if m.version > baseline.BASELINE_VERSION]
    assert later, "no migration after the baseline to look at"
    found = [f"{m.name}: {hit.group(0)}" for m in later
             for hit in routine.finditer(re.sub(r"--[^\n]*", "", m.text))]
    assert found == []


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
