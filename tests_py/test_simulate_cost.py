"""What a simulated window costs, counted (not timed): the clock commits once per part of 15
minutes, so no transaction holds more than a quarter of an hour of claims and reports (the
versions of the same few kind and slot rows inside one transaction cannot be pruned, and a
part of three hours made every step slower); the scratch session plans every statement
generically and does not wait for the disk, on unlogged tables; and the parts pick up the runs
still running from their slot rows, so a window cut into parts gives exactly what one part
gives.

A real scratch database (tickq.db.scratch) on the test server, the real claim and report SQL.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import time
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from tickq.check.simulate import evaluate
from tickq.db.api import check as api
from tickq.db.api.check import Window
from tickq.registry import load_registry

# A 5-minute kind holding its only slot for 7 minutes, so some run is still running at the end
# of every part and the next part must pick it up; a low hourly kind waits behind it.
REGISTRY = """
[settings]
slots = 1
tick = "5m"
stale_after = "15m"
housekeeping_every = "1d"

[kinds.often]
command = ["true"]
every = "5m"
timeout = "7m"
priority = "high"

[kinds.hourly]
command = ["true"]
every = "1h"
offset = "10m"
timeout = "3m"
priority = "low"
"""

START = dt.datetime(2026, 6, 1, 10, 0, tzinfo=dt.UTC)
HOURS = 2


def window(hours: float) -> Window:
    return Window(starts_at=START, hours=hours, period=dt.timedelta(hours=1),  # type: ignore[arg-type]
                  warm_up=dt.timedelta(0), dst_zone=None)


def xid(conn: psycopg.Connection) -> int:
    """A new transaction id, taken by a statement of its own (autocommit)."""
    row = conn.execute("SELECT pg_current_xact_id()::text::bigint").fetchone()
    assert row is not None
    return int(row[0])


@contextlib.contextmanager
def no_autovacuum(server_url: str) -> Iterator[None]:
    """The test server without autovacuum while the block counts transaction ids, which are the
    whole server's: an autoanalyze of any of its databases takes one (it writes pg_statistic).
    Off, then no worker left, then the block; back on after. Only on a server the tests started:
    a server named by DATABASE_URL is someone's own, whose settings a test does not change."""
    if os.environ.get("DATABASE_URL"):
        pytest.skip("counts the whole server's transaction ids: needs the tests' own server "
                    "(run without DATABASE_URL)")
    with psycopg.connect(server_url, autocommit=True) as admin:
        admin.execute("ALTER SYSTEM SET autovacuum = off")
        admin.execute("SELECT pg_reload_conf()")
        try:
            deadline = time.monotonic() + 60
            while admin.execute("SELECT count(*) FROM pg_stat_activity"
                                " WHERE backend_type = 'autovacuum worker'").fetchone() != (0,):
                assert time.monotonic() < deadline, "an autovacuum worker did not end"
                time.sleep(0.05)
            yield
        finally:
            admin.execute("ALTER SYSTEM RESET autovacuum")
            admin.execute("SELECT pg_reload_conf()")


def runs(conn: psycopg.Connection) -> list[tuple]:
    return conn.execute(
        "SELECT kind, due_at, claimed_at, finished_at, outcome::text FROM tickq.job_run"
        " WHERE dispatcher = 'simulator' ORDER BY claimed_at, kind").fetchall()


def test_a_window_commits_once_per_quarter_hour_of_its_clock(
    pg_server_url: str, tmp_path: Path
) -> None:
    path = tmp_path / "r.toml"
    path.write_text(REGISTRY)
    registry = load_registry(path)
    with api.scratch(pg_server_url) as conn:
        assert conn.execute("SELECT current_setting('plan_cache_mode'),"
                            " current_setting('synchronous_commit')").fetchone() == (
            "force_generic_plan", "off")
        # The tables the simulation writes make no WAL; a crash empties unlogged tables, the
        # template's too, so a copy holds no row in them but the slots (which a sync makes)
        persistence = dict(conn.execute(
            "SELECT relname::text, relpersistence::text FROM pg_class"
            " WHERE relnamespace = 'tickq'::regnamespace AND relkind = 'r'").fetchall())
        assert {persistence[t] for t in ("job_kind", "job_run", "slot", "alert", "run_total",
                                        "dispatcher", "dispatcher_tick")} == {"u"}
        assert {persistence[t] for t in ("settings", "migration")} == {"p"}
        for table in (t for t, p in persistence.items() if p == "u" and t != "slot"):
            assert conn.execute(f"SELECT count(*) FROM tickq.{table}").fetchone() == (0,), table
        api.load(conn, registry)
        parts = conn.execute(
            "SELECT count(*) FROM tickq.simulation_parts(%s, %s)",
            (START + dt.timedelta(hours=HOURS), START)).fetchone()
        assert parts == (4 * HOURS + 1,)  # 10:00, 10:15, ... 11:45 and the last instant, 12:00
        with no_autovacuum(pg_server_url):
            before = xid(conn)
            api.simulate_window(conn, window(HOURS), None, steady=True)
            after = xid(conn)
        # every part writes (the 5-minute kind is claimed at each of its ticks) and commits:
        # one transaction id each, none for anything else
        assert after - before - 1 == 4 * HOURS + 1
        in_parts = runs(conn)
    # runs that one part claimed and the next reported: what the parts must hand on
    quarter = dt.timedelta(minutes=15)
    crossing = [r for r in in_parts
                if r[3] is not None and (r[2] - START) // quarter != (r[3] - START) // quarter]
    assert len(crossing) >= HOURS * 2, in_parts

    # The same window in one part (a simulate_events call in one transaction): the same runs.
    with api.scratch(pg_server_url) as conn:
        api.load(conn, registry)
        with conn.transaction():
            conn.execute("SELECT tickq.simulation_start(%s)", (START,))
            conn.execute("SELECT tickq.simulate_events(%s, NULL, %s)",
                         (START + dt.timedelta(hours=HOURS), START))
        assert runs(conn) == in_parts


def test_a_template_whose_unlogged_tables_a_crash_emptied_checks_the_same(
    pg_server_url: str, tmp_path: Path
) -> None:
    """A server that crashes resets every unlogged table to empty, the template's too: the only
    rows that can go are the slots, and a sync makes them again, so the verdict is the same."""
    path = tmp_path / "r.toml"
    path.write_text(REGISTRY)
    registry = load_registry(path)
    verdicts = []
    for crashed in (False, True):
        with api.scratch(pg_server_url) as conn:
            if crashed:
                conn.execute("TRUNCATE tickq.slot")  # what recovery leaves of it
            worst = evaluate(conn, registry, None)
        # what does not depend on the day the windows start (two checks may fall either side
        # of midnight)
        verdicts.append([(k.kind, k.runs, k.longest_wait, k.starved, k.behind, k.in_window)
                         for k in worst.kinds])
    assert verdicts[0] == verdicts[1]
    assert any(runs for _, runs, *_ in verdicts[0])


HEAVY = """
[settings]
slots = 3
tick = "5m"
stale_after = "15m"
housekeeping_every = "1d"

[kinds.heavy]
command = ["true"]
every = "1h"
offset = "10m"
timeout = "10m"
weight = 2
priority = "high"

[kinds.light]
command = ["true"]
every = "5m"
timeout = "1m"
priority = "low"
"""


def test_a_heavy_run_held_across_parts_is_picked_up_once(
    pg_server_url: str, tmp_path: Path
) -> None:
    """A run of weight 2 holds two slot rows; the next part picks it up by its first, so it is
    reported once, at its own finish (twice was refused: "not live", and the check failed)."""
    path = tmp_path / "r.toml"
    path.write_text(HEAVY)
    registry = load_registry(path)
    with api.scratch(pg_server_url) as conn:
        api.load(conn, registry)
        api.simulate_window(conn, window(HOURS), None, steady=True)
        heavy = [r for r in runs(conn) if r[0] == "heavy"]
    # claimed at 10:10 and 11:10, each finished 10 minutes later: in the part after its claim's
    assert [(r[2].strftime("%H:%M"), r[3].strftime("%H:%M"), r[4]) for r in heavy] == [
        ("10:10", "10:20", "ok"), ("11:10", "11:20", "ok")]



def test_a_scratch_session_parses_each_cron_string_once(pg_server_url: str, tmp_path: Path) -> None:
    """A scratch session is the simulator's from its start: the sync and the windows' planning
    keep each cron string's calendar (tickq.cron_calendar) for the simulation after them, where
    another session parses it at every use."""
    path = tmp_path / "r.toml"
    path.write_text('[settings]\nslots = 2\ntick = "1m"\n\n[kinds.nightly]\ncommand = ["true"]\n'
                    'cron = "7,37 2 * * *"\ntimeout = "5m"\n')
    kept = ("SELECT coalesce(current_setting('tickq.cron_'"
            " || md5('7,37 2 * * *' || E'\\n' || 'UTC'), true), '') LIKE '(%',"
            " (SELECT count(*) FROM tickq.job_kind WHERE name = 'nightly')")
    with api.scratch(pg_server_url) as conn:
        assert conn.execute(kept).fetchone() == (False, 0)
        api.load(conn, load_registry(path), now=START)
        assert conn.execute(kept).fetchone() == (True, 1)
