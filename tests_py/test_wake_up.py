"""What a wake-up costs: the modules a command imports, the connections an idle tick opens and
the rows it writes, and a sync of an unchanged registry that writes nothing."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import psycopg
import pytest

from tickq.db import migrator

REPO = Path(__file__).resolve().parent.parent

# Modules only other commands need: the page and its templates, agents, legacy, timers, check.
NOT_FOR_A_TICK = ("jinja2", "tickq.page", "tickq.agents", "tickq.legacy",
                  "tickq.timers", "tickq.check", "tickq.cli.status", "tickq.cli.check",
                  "tickq.cli.agents", "tickq.cli.legacy", "tickq.cli.timers", "tickq.cli.page",
                  "httpx")


def env() -> dict[str, str]:
    found = {k: v for k, v in os.environ.items()
             if k not in ("DATABASE_URL", "TICKQ_REGISTRY", "TICKQ_LOG_FORMAT", "COLUMNS")}
    found["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(REPO / "python_runner"), os.environ.get("PYTHONPATH")) if p)
    found["PYTHONDONTWRITEBYTECODE"] = "1"
    return found


def imported(*args: str) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    """The command run with -X importtime, and every module it imported."""
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "tickq.cli", *args],
                          env=env(), capture_output=True, text=True, timeout=60)
    modules = {line.rpartition("|")[2].strip() for line in done.stderr.splitlines()
               if line.startswith("import time:")}
    return done, modules


def registry(folder: Path, kinds: int = 3) -> Path:
    """Kinds due once a day, twelve hours from now: a tick after the first runs nothing."""
    at = (datetime.now(UTC) + timedelta(hours=12)).strftime("%H:%M")
    text = "[settings]\nslots = 2\n" + "".join(
        f'\n[kinds.k{i}]\ncommand = ["true"]\nat = ["{at}"]\ntimeout = "30s"\n'
        for i in range(kinds))
    path = folder / "registry.toml"
    path.write_text(textwrap.dedent(text))
    return path


def tick(path: Path, db_url: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "tickq.cli", "tick", "--registry", str(path), "--database-url",
         db_url], env=env(), capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


def rows(conn: psycopg.Connection) -> dict[str, set[tuple[str, str, str]]]:
    """Every row of every tickq table by its place and the transactions that wrote or locked
    it: a row written, deleted or locked changes its table's set."""
    tables = [t for (t,) in conn.execute(
        "SELECT c.relname FROM pg_class AS c JOIN pg_namespace AS n ON n.oid = c.relnamespace"
        " WHERE n.nspname = 'tickq' AND c.relkind = 'r' ORDER BY 1").fetchall()]
    return {t: set(conn.execute(
        f"SELECT ctid::text, xmin::text, xmax::text FROM tickq.{t}").fetchall())  # noqa: S608
        for t in tables}


def written(before: dict[str, set], after: dict[str, set]) -> list[str]:
    return sorted(t for t in after if before.get(t) != after[t])


def sessions(conn: psycopg.Connection, server: bool = False) -> int:
    """Sessions ever started on this database (or on every database of the server), once every
    other client backend has ended (a backend's counts reach the statistics before it leaves
    the list of backends)."""
    where = "true" if server else "datname = current_database()"
    for _ in range(400):
        conn.execute("SELECT pg_stat_clear_snapshot()")
        others = conn.execute(
            f"SELECT count(*) FROM pg_stat_activity WHERE {where}"  # noqa: S608
            " AND pid <> pg_backend_pid() AND backend_type = 'client backend'").fetchone()[0]
        if others == 0:
            conn.execute("SELECT pg_stat_clear_snapshot()")
            return conn.execute(f"SELECT sum(sessions)::int FROM pg_stat_database"  # noqa: S608
                                f" WHERE {where}").fetchone()[0]
        conn.execute("SELECT pg_sleep(0.05)")
    raise AssertionError("other sessions stayed on the server")


# ---------------------------------------------------------------- imports


def test_version_imports_neither_the_database_nor_other_commands() -> None:
    done, modules = imported("--version")
    assert done.returncode == 0 and done.stdout.startswith("tickq ")
    assert not {m for m in modules if m.startswith(("psycopg", *NOT_FOR_A_TICK))}
    assert "tickq.cli.options" not in modules  # no command's parser is built


def test_a_tick_imports_only_what_a_tick_uses(db_url: str, tmp_path: Path) -> None:
    done, modules = imported("tick", "--registry", str(registry(tmp_path)),
                             "--database-url", db_url)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "tickq.dispatch.tick" in modules
    assert sorted(m for m in modules if m.startswith(NOT_FOR_A_TICK)) == []


def test_a_tick_of_a_registry_that_passed_before_loads_no_toml_parser_or_checker(
    db_url: str, tmp_path: Path
) -> None:
    path = registry(tmp_path)
    tick(path, db_url)
    done, modules = imported("tick", "--registry", str(path), "--database-url", db_url)
    assert done.returncode == 0, done.stderr[-2000:]
    assert sorted(m for m in modules if m.startswith(("tomllib", "jsonschema"))) == []


def test_a_command_loads_the_options_of_its_group_only() -> None:
    """The groups' modules are imported by name (-X importtime does not see those imports)."""
    code = ("import sys; from tickq.cli import main; main.build_parser(sys.argv[1:]); "
            "print(' '.join(sorted(m for m in sys.modules if m.startswith('tickq.cli.options'))))")
    loaded = {words[0]: subprocess.run([sys.executable, "-c", code, *words], env=env(), text=True,
                                       capture_output=True, check=True, timeout=60).stdout.split()
              for words in (["tick"], ["agent", "add", "x"], ["--help"])}
    assert loaded["tick"] == ["tickq.cli.options", "tickq.cli.options.queue"]
    assert loaded["agent"] == ["tickq.cli.options", "tickq.cli.options.agent",
                               "tickq.cli.options.values"]
    assert len(loaded["--help"]) == 10, loaded["--help"]  # the package, 8 groups, the values


def test_the_parser_of_one_command_holds_that_command_s_group_only() -> None:
    from tickq.cli import main, options

    parser = main.build_parser(["tick", "--registry", "x.toml"])
    queue = {name for name, group in options.GROUPS.items() if group == "queue"}
    assert "tick" in queue and "check" not in queue
    assert set(main.subcommands(parser)) == queue
    assert {"tick", "check", "agent", "legacy", "systemd"} <= set(
        main.subcommands(main.build_parser(["--help"])))
    # An unknown word gets the whole parser: argparse names the commands it knows.
    assert len(main.subcommands(main.build_parser(["tik"]))) > 10


# What a tick leaves the cyclic collector: its passes while nothing is frozen yet (the start-up:
# psycopg and the command's imports, none of it garbage) and once the start-up is frozen (what
# the command makes).
COLLECTOR = """
import gc, json, sys
passes = []
gc.callbacks.append(lambda phase, info: passes.append(gc.get_freeze_count() > 0)
                    if phase == "start" else None)
from tickq.cli.main import main
status = main(sys.argv[1:])
print(json.dumps({"status": status, "starting": passes.count(False),
                  "running": passes.count(True), "frozen": gc.get_freeze_count()}))
"""


def test_a_tick_starts_without_collecting_and_collects_what_it_makes(
    db_url: str, tmp_path: Path
) -> None:
    """Before, the collector passed 70-odd times over a tick's start-up objects (about 12 ms of
    an idle tick, bench/README.md); now they are frozen once the command is imported, and the
    collector, back on, passes over what the tick makes (without gc.enable after the freeze it
    passed 0 times)."""
    path = registry(tmp_path)  # a first tick: it syncs the kinds and runs the housekeeping
    done = subprocess.run([sys.executable, "-c", COLLECTOR, "tick", "--registry", str(path),
                           "--database-url", db_url],
                          env=env(), capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    seen = json.loads(done.stdout.splitlines()[-1])
    assert seen["status"] == 0, done.stderr[-2000:]
    assert seen["frozen"] > 10_000, seen  # psycopg, the parser and the tick's modules
    assert seen["starting"] < 15, seen  # those before main only (there were 71)
    assert seen["running"] >= 1, seen  # the collector is back for what the tick makes


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



@contextlib.contextmanager
def counting_calls(conn: psycopg.Connection) -> Iterator[None]:
    """The database's sessions count their calls of plpgsql functions (track_functions) while
    this lasts."""
    name = conn.info.dbname
    conn.execute(f"ALTER DATABASE \"{name}\" SET track_functions = 'pl'")
    try:
        yield
    finally:
        conn.execute(f"ALTER DATABASE \"{name}\" RESET track_functions")


def judged(conn: psycopg.Connection, function: str = "parse_kind") -> int:
    """Kinds the database has judged (calls of tickq.parse_kind, through the sync or
    kind_problems; or calls of `function`) in the sessions that have ended, once every other
    session has ended."""
    sessions(conn)
    return conn.execute("SELECT coalesce(sum(calls), 0)::int FROM pg_stat_user_functions"
                        " WHERE schemaname = 'tickq' AND funcname = %s", [function]).fetchone()[0]


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
