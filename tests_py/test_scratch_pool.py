"""The scratch databases a check simulates in are kept for the next check (tickq.db.scratch's
pool): a check takes one no other check holds, puts it back to the template's state, and leaves
it when it ends, so checks after the first neither copy nor drop a database (and ask the server
for no checkpoint). What it puts back must be exactly what a fresh copy of the template holds,
or a check's verdict would depend on what was checked before it (test_scratch_pool_put_back.py);
here, which database a check takes.

Real `tickq` subprocesses and the scratch API against a real PostgreSQL (tests_py/conftest.py).
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
from pathlib import Path

import psycopg
from processes import tickq, tickq_env
from scratch_pool_state import REAL_FIX, TIMEOUTS, admin_of, database_of, role_of

from tickq.db import scratch
from tickq.db.api import check as api
from tickq.registry import load_registry


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
    " (SELECT count(*) FROM pg_constraint AS c WHERE c.confrelid = 'tickq.job_run'::regclass"
    "   AND c.contype = 'f'),"
    " (SELECT count(*) FROM pg_index AS i WHERE i.indrelid = 'tickq.job_run'::regclass),"
    " (SELECT count(*) FROM pg_index AS i WHERE i.indexrelid::regclass::text"
    "   IN ('tickq.job_kind_claimable', 'tickq.job_kind_catch_up')),"
    " (SELECT count(*) FROM pg_constraint AS c WHERE c.contype = 'c' AND c.conrelid IN"
    "   ('tickq.job_kind'::regclass, 'tickq.job_run'::regclass, 'tickq.pool_slot'::regclass))")


def test_only_the_scratch_databases_go_without_the_queues_safeguards(
    pg_server_url: str, conn: psycopg.Connection
) -> None:
    # The queue: the dispatcher's and reader's functions run as their owner with a pinned
    # search_path, every run names a kind that exists, a run's steps and turns go with it, the
    # history is indexed for its views, the claim finds due kinds by index, and the tables check
    # their rows.
    definers, run_kind_keys, run_children, run_indexes, claim_indexes, checks = (
        conn.execute(SAFEGUARDS).fetchone() or (0,) * 6)
    assert (definers > 20 and run_kind_keys == 1 and run_children == 2 and run_indexes == 4
            and claim_indexes == 2 and checks >= 5)
    with scratch.scratch(pg_server_url, TIMEOUTS) as sim:
        # A scratch database: none of that but job_run's primary key (queries/scratch_lean.sql),
        # and its session pins the search_path the queue's functions pin themselves.
        assert sim.execute(SAFEGUARDS).fetchone() == (0, 0, 0, 1, 0, 0)
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
    assert conn.execute(SAFEGUARDS).fetchone() == (definers, 1, 2, 4, 2, checks)
