"""What a check puts back in a pool database it is done with (tickq.db.scratch): exactly what a
fresh copy of the template holds, emptying only the tables a check writes, at once when it is
done with it while another database still simulates, and again when it changed after that.
Which database a check takes: test_scratch_pool.py.

The scratch API against a real PostgreSQL (tests_py/conftest.py).
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import psycopg
from scratch_pool_state import (
    REAL_FIX,
    TIMEOUTS,
    admin_of,
    as_if_none_was_put_back,
    comments,
    contents,
    database_of,
    fresh_contents,
)

from tickq.db import scratch
from tickq.db.api import check as api
from tickq.db.connect import with_dbname
from tickq.registry import load_registry


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
