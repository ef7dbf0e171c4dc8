"""The scratch databases a check simulates in are kept for the next check (tickq.db.scratch's
pool): a check takes one no other check holds, puts it back to the template's state, and leaves
it when it ends, so checks after the first neither copy nor drop a database (and ask the server
for no checkpoint). What it puts back must be exactly what a fresh copy of the template holds,
or a check's verdict would depend on what was checked before it.

Real `tickq` subprocesses and the scratch API against a real PostgreSQL (tests_py/conftest.py).
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import psycopg
from processes import tickq, tickq_env

from tickq.db import Timeouts, scratch
from tickq.db.api import check as api
from tickq.db.connect import with_dbname
from tickq.registry import load_registry

REPO = Path(__file__).resolve().parent.parent
REAL_FIX = REPO / "examples" / "starvation" / "real_fix.toml"
TIMEOUTS = Timeouts(statement=600)


def contents(conn: psycopg.Connection) -> dict[str, str]:
    """Every tickq table's rows (sorted) and every sequence's position, as text."""
    out = {}
    for rel, kind in conn.execute(
            "SELECT 'tickq.' || quote_ident(c.relname), c.relkind FROM pg_class AS c"
            " WHERE c.relnamespace = 'tickq'::regnamespace AND c.relkind IN ('r', 'S')"
            " ORDER BY 1").fetchall():
        query = (f"SELECT last_value::text || ' ' || is_called::text FROM {rel}" if kind == "S"
                 else f"SELECT coalesce(jsonb_agg(r ORDER BY r::text), '[]')::text"
                      f" FROM (SELECT to_jsonb(t) AS r FROM {rel} AS t) AS q")
        row = conn.execute(query).fetchone()
        assert row is not None
        out[rel] = row[0]
    return out


def database_of(conn: psycopg.Connection) -> str:
    row = conn.execute("SELECT current_database()").fetchone()
    assert row is not None
    return str(row[0])


@contextlib.contextmanager
def admin_of(pg_server_url: str) -> Iterator[psycopg.Connection]:
    with psycopg.connect(pg_server_url, autocommit=True) as admin:
        yield admin


def role_of(admin: psycopg.Connection) -> str:
    row = admin.execute("SELECT current_user").fetchone()
    assert row is not None
    return str(row[0])


def comments(admin: psycopg.Connection) -> dict[str, str]:
    return dict(admin.execute(
        "SELECT datname, shobj_description(oid, 'pg_database') FROM pg_database"
        " WHERE datname LIKE 'tickq_scratch_pool%'").fetchall())


def fresh_contents(admin: psycopg.Connection, pg_server_url: str, beside: str) -> dict[str, str]:
    """`contents` of a fresh copy of the template (named after pool database `beside`)."""
    fresh = f"tickq_test_fresh_{beside[-12:]}"
    template = scratch.template_name(role_of(admin))
    admin.execute(f'DROP DATABASE IF EXISTS "{fresh}"')
    admin.execute(f'CREATE DATABASE "{fresh}" TEMPLATE "{template}"')
    try:
        with psycopg.connect(with_dbname(pg_server_url, fresh)) as copy:
            return contents(copy)
    finally:
        admin.execute(f'DROP DATABASE IF EXISTS "{fresh}"')


def as_if_none_was_put_back(pg_server_url: str) -> None:
    """Mark every pool database as in use by the last check, so the next is taken in order
    (a database an earlier test's check put back would be taken first)."""
    with admin_of(pg_server_url) as admin:
        for name, mark in comments(admin).items():
            if mark == scratch.CLEAN_MARK:
                admin.execute(f"""COMMENT ON DATABASE "{name}" IS '{scratch.POOL_MARK}'""")


def test_a_used_pool_database_is_put_back_to_what_a_fresh_copy_holds(
    pg_server_url: str
) -> None:
    as_if_none_was_put_back(pg_server_url)
    with scratch.scratch(pg_server_url, TIMEOUTS) as conn:  # the template exists from here on
        first = database_of(conn)
        assert first.startswith(scratch.POOL_PREFIX)
        api.load(conn, load_registry(REAL_FIX))
        week = api.windows(conn)[0]
        api.simulate_window(conn, week, None, steady=True)
        row = conn.execute("SELECT count(*) FROM tickq.job_run").fetchone()
        assert row is not None and row[0] > 1000  # a used database: a week of runs in it
        # and what a check does not write: a row the template had, changed (its table keeps
        # its row count), and a row in a table it had none in
        conn.execute("UPDATE tickq.migration SET name = 'changed' WHERE version ="
                     " (SELECT min(version) FROM tickq.migration)")
        conn.execute("INSERT INTO tickq.dispatcher_tick VALUES ('elsewhere', 'd', now())")
    with admin_of(pg_server_url) as admin:
        expected = fresh_contents(admin, pg_server_url, first)
    with scratch.scratch(pg_server_url, TIMEOUTS) as conn:
        assert database_of(conn) == first  # the same one, taken again
        assert contents(conn) == expected
        # and it simulates as a fresh copy does: the week's runs again
        api.load(conn, load_registry(REAL_FIX))
        api.simulate_window(conn, api.windows(conn)[0], None, steady=True)
        again = conn.execute("SELECT count(*) FROM tickq.job_run").fetchone()
        assert again == row


def test_checks_beside_each_other_never_share_a_pool_database(pg_server_url: str) -> None:
    with contextlib.ExitStack() as stack:
        held = [database_of(stack.enter_context(scratch.scratch(pg_server_url, TIMEOUTS)))
                for _ in range(scratch.POOL_SIZE + 1)]
        assert len(set(held)) == len(held), held
        assert all(name.startswith(scratch.POOL_PREFIX) for name in held[:-1]), held
        # every pool database held: the next one simulates in a copy of its own...
        own = held[-1]
        assert not own.startswith(scratch.POOL_PREFIX), held
    with admin_of(pg_server_url) as admin:
        left = {r[0] for r in admin.execute(
            "SELECT datname FROM pg_database WHERE datname = ANY(%s)", (held,))}
    assert left == set(held[:-1])  # ...dropped when it ends; the pool stays
    with scratch.scratch(pg_server_url, TIMEOUTS) as conn:
        assert database_of(conn) == held[0]  # let go of when its holder ended


def test_checks_after_the_first_neither_copy_nor_drop_a_database(
    tmp_path: Path, db_url: str, pg_server_url: str
) -> None:
    def databases(admin: psycopg.Connection) -> set[tuple[str, int]]:
        return {(r[0], int(r[1])) for r in admin.execute(
            "SELECT datname, oid FROM pg_database WHERE datname LIKE 'tickq_scratch%'")}

    def checkpoints_asked(admin: psycopg.Connection) -> int:
        row = admin.execute(
            "SELECT num_requested FROM pg_stat_checkpointer"
            if admin.info.server_version >= 170000
            else "SELECT checkpoints_req FROM pg_stat_bgwriter").fetchone()
        assert row is not None
        return int(row[0])

    first = tickq("check", "--registry", str(REAL_FIX), "--database-url", db_url)
    assert first.returncode == 0, first.stdout + first.stderr
    with admin_of(pg_server_url) as admin:
        before, asked = databases(admin), checkpoints_asked(admin)
        again = tickq("check", "--registry", str(REAL_FIX), "--database-url", db_url)
        assert again.returncode == 0, again.stdout + again.stderr
        replay = tickq("simulate", "--registry", str(REAL_FIX), "--hours", "2",
                       "--database-url", db_url)
        assert replay.returncode == 0, replay.stdout + replay.stderr
        assert databases(admin) == before  # the same databases: none made, none dropped
        assert checkpoints_asked(admin) == asked  # a DROP DATABASE would have asked for one
    # the same verdict and the same table as the first check's (its databases were fresh)
    assert again.stdout == first.stdout


def test_a_pool_of_another_schema_is_dropped_and_a_lookalike_is_never_touched(
    pg_server_url: str
) -> None:
    with admin_of(pg_server_url) as admin:
        role = role_of(admin)
        stale = scratch.pool_name(role, 0).replace(scratch.schema_checksum(), "000000000000")
        mine = scratch.pool_name(role, 0)[:-1] + "mine"
        lookalike = scratch.pool_name(role, scratch.POOL_SIZE - 1)
        for name in (stale, mine, lookalike):
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            admin.execute(f'CREATE DATABASE "{name}"')
        admin.execute(f"""COMMENT ON DATABASE "{stale}" IS '{scratch.POOL_MARK}'""")
        try:
            with contextlib.ExitStack() as stack:
                held = [database_of(stack.enter_context(scratch.scratch(pg_server_url, TIMEOUTS)))
                        for _ in range(scratch.POOL_SIZE)]
            left = {r[0] for r in admin.execute(
                "SELECT datname FROM pg_database WHERE datname = ANY(%s)",
                ([stale, mine, lookalike],))}
            assert left == {mine, lookalike}  # an older tickq's pool is gone, not the others
            # a database of a pool's name that tickq did not make is passed over, never used
            assert lookalike not in held
            assert held[-1] not in {mine, lookalike} and held[-1].startswith("tickq_scratch_")
        finally:
            for name in (stale, mine, lookalike):
                admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def test_a_pool_database_that_cannot_be_put_back_is_dropped_and_made_again(
    pg_server_url: str
) -> None:
    with scratch.scratch(pg_server_url, TIMEOUTS) as conn:
        broken = database_of(conn)
        conn.execute("DROP TABLE tickq.scratch_seed")  # what the put-back reads
    with admin_of(pg_server_url) as admin:
        def oid() -> int | None:
            row = admin.execute("SELECT oid FROM pg_database WHERE datname = %s",
                                (broken,)).fetchone()
            return None if row is None else int(row[0])

        before = oid()
        with scratch.scratch(pg_server_url, TIMEOUTS) as conn:
            assert database_of(conn) != broken
            assert conn.execute("SELECT count(*) FROM tickq.scratch_seed").fetchone() != (0,)
        assert oid() is None  # dropped
        with scratch.scratch(pg_server_url, TIMEOUTS) as conn:
            assert database_of(conn) == broken  # made again from the template
            assert conn.execute("SELECT count(*) FROM tickq.job_run").fetchone() == (0,)
        assert oid() not in (None, before)


def test_checks_started_at_once_take_pool_databases_of_their_own_and_agree(
    db_url: str, pg_server_url: str
) -> None:
    # Three `tickq check` processes at once, as a CI with parallel jobs starts them: they race
    # to make and take pool databases (a copy of the template is refused while another is
    # being made from it; two make the same name) and must each end with the same verdict and
    # the same table, and hold nothing afterwards.
    checks = [subprocess.Popen(
        [sys.executable, "-m", "tickq.cli", "check", "--registry", str(REAL_FIX),
         "--database-url", db_url], env=tickq_env(), stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True) for _ in range(3)]
    outs = [check.communicate(timeout=120) for check in checks]
    for check, (out, err) in zip(checks, outs, strict=True):
        assert check.returncode == 0, out + err
    assert len({out for out, _ in outs}) == 1
    with admin_of(pg_server_url) as admin:
        role = role_of(admin)
        pool = [scratch.pool_name(role, n) for n in range(scratch.POOL_SIZE)]
        held = admin.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = ANY(%s)",
                             (pool,)).fetchone()
        assert held == (0,)
        own = admin.execute(
            "SELECT datname FROM pg_database WHERE datname ~ '^tickq_scratch_[0-9a-f]{12}$'"
        ).fetchall()
        assert own == []  # a copy of its own, if a check made one, is dropped


SAFEGUARDS = (
    "SELECT (SELECT count(*) FROM pg_proc AS p WHERE p.pronamespace = 'tickq'::regnamespace"
    "   AND p.prosecdef),"
    " (SELECT count(*) FROM pg_constraint AS c WHERE c.conrelid = 'tickq.job_run'::regclass"
    "   AND c.contype = 'f' AND c.confrelid = 'tickq.job_kind'::regclass),"
    " (SELECT count(*) FROM pg_index AS i WHERE i.indrelid = 'tickq.job_run'::regclass),"
    " (SELECT count(*) FROM pg_constraint AS c WHERE c.contype = 'c' AND c.conrelid IN"
    "   ('tickq.job_kind'::regclass, 'tickq.job_run'::regclass, 'tickq.pool_slot'::regclass))")


def test_only_the_scratch_databases_go_without_the_queues_safeguards(
    pg_server_url: str, conn: psycopg.Connection
) -> None:
    # The queue: the dispatcher's and reader's functions run as their owner with a pinned
    # search_path, every run names a kind that exists, the history is indexed for its views, and
    # the tables check their rows.
    definers, run_kind_keys, run_indexes, checks = conn.execute(SAFEGUARDS).fetchone() or (0,) * 4
    assert definers > 20 and run_kind_keys == 1 and run_indexes == 4 and checks >= 5
    with scratch.scratch(pg_server_url, TIMEOUTS) as sim:
        # A scratch database: none of that but job_run's primary key (queries/scratch_lean.sql),
        # and its session pins the search_path the queue's functions pin themselves.
        assert sim.execute(SAFEGUARDS).fetchone() == (0, 0, 1, 0)
        assert sim.execute("SELECT current_setting('search_path')").fetchone() == (
            "pg_catalog, tickq, pg_temp",)
        # and the simulation still runs the queue's claim: a run it opens is one a claim opened
        api.load(sim, load_registry(REAL_FIX))
        api.simulate_window(sim, api.windows(sim)[1], None, steady=True)
        row = sim.execute("SELECT count(*), count(*) FILTER (WHERE r.kind NOT IN"
                          " (SELECT k.name FROM tickq.job_kind AS k)) FROM tickq.job_run AS r"
                          ).fetchone()
        assert row is not None and row[0] > 500 and row[1] == 0
    # and the queue's own safeguards are untouched by a check on the same server
    assert conn.execute(SAFEGUARDS).fetchone() == (definers, 1, 4, checks)


def test_putting_back_empties_only_the_tables_a_check_wrote(pg_server_url: str) -> None:
    """TRUNCATE gives a table new files: one a check never writes (the migrations' own rows,
    seeded from the template) keeps its files when the database is put back, whatever the
    session's search_path makes of its name; one a check writes (job_run) gets new ones."""
    files = ("SELECT c.relname, c.relfilenode FROM pg_class AS c"
             " WHERE c.oid IN ('tickq.migration'::regclass, 'tickq.job_run'::regclass)")
    as_if_none_was_put_back(pg_server_url)
    with scratch.scratch(pg_server_url, TIMEOUTS) as conn:
        first = database_of(conn)
        api.load(conn, load_registry(REAL_FIX))
        api.simulate_window(conn, api.windows(conn)[1], None, steady=True)
        before = dict(conn.execute(files).fetchall())
    with scratch.scratch(pg_server_url, TIMEOUTS) as conn:
        assert database_of(conn) == first
        after = dict(conn.execute(files).fetchall())
    assert after["migration"] == before["migration"]
    assert after["job_run"] != before["job_run"]


def test_a_database_done_with_while_another_simulates_is_put_back_at_once(
    db_url: str, pg_server_url: str
) -> None:
    """A check of two windows simulates each in a pool database. The one beside the first,
    done while the first still simulates (here held back by a lock until then), is put back at
    once and marked so; the next check takes it first and as it is, and marks it in use before
    anything writes to it. The verdicts are the same."""
    from tickq.check import simulate

    registry = load_registry(REAL_FIX)
    as_if_none_was_put_back(pg_server_url)
    with admin_of(pg_server_url) as admin, simulate.scratch(pg_server_url, 2) as sims:
        sims.preload(registry)
        assert sims.preloaded(registry)
        first = database_of(sims.conn)
        with psycopg.connect(with_dbname(pg_server_url, first)) as holder:
            # the first database's simulation starts by writing pool_slot: it waits here
            holder.execute("LOCK TABLE tickq.pool_slot IN ACCESS EXCLUSIVE MODE")
            with ThreadPoolExecutor(1) as pool:
                worst = pool.submit(simulate.evaluate, sims, registry, None, last=True)
                deadline = time.monotonic() + 8
                while scratch.CLEAN_MARK not in comments(admin).values():
                    assert time.monotonic() < deadline and not worst.done(), comments(admin)
                    time.sleep(0.05)
                holder.rollback()  # the first may go on
                result = worst.result()
        clean = [name for name, mark in comments(admin).items() if mark == scratch.CLEAN_MARK]
        assert len(clean) == 1 and clean[0] != first
        expected = fresh_contents(admin, pg_server_url, clean[0])
    with admin_of(pg_server_url) as admin:
        with scratch.scratch(pg_server_url, TIMEOUTS) as conn:
            assert database_of(conn) == clean[0]  # taken first
            assert contents(conn) == expected  # in the template's state, as put back
            # and in use now: a check that died here would leave it to the next to put back
            assert comments(admin)[clean[0]] == scratch.POOL_MARK
        with simulate.scratch(pg_server_url, 2) as sims:  # the databases put back as before
            assert simulate.evaluate(sims, registry, None) == result


def test_a_database_marked_put_back_but_changed_since_is_put_back_again(pg_server_url: str) -> None:
    """The mark only says which to take first: a database changed after its put-back (by hand,
    or by a check of an older tickq) is still put back before anything is simulated in it."""
    as_if_none_was_put_back(pg_server_url)
    with scratch.scratch(pg_server_url, TIMEOUTS) as conn:
        used = database_of(conn)
        api.load(conn, load_registry(REAL_FIX))
        api.simulate_window(conn, api.windows(conn)[1], None, steady=True)
        conn.execute(f"""COMMENT ON DATABASE "{used}" IS '{scratch.CLEAN_MARK}'""")
    with admin_of(pg_server_url) as admin:
        expected = fresh_contents(admin, pg_server_url, used)
    with scratch.scratch(pg_server_url, TIMEOUTS) as conn:
        assert database_of(conn) == used
        assert contents(conn) == expected
