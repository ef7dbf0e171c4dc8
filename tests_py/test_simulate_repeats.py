"""A stretch of a window that repeats a day's stretch already simulated, from an instant at
rest to another, is not simulated again: its runs are copied a day later
(tickq.simulation_repeat). The window's runs and its report are exactly those of the same
window moved part by part with nothing copied: every run's kind, due time, claim, finish,
outcome, trigger and slots, and each kind's runs, longest wait, starved, when the wait began and
what it waited behind.

A real scratch database on the test server, the real claim and report SQL.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import psycopg
import pytest

from tickq.db.api import check as api
from tickq.db.api.check import Window
from tickq.registry import Registry, load_registry

REPO = Path(__file__).resolve().parent.parent

# Weekdays in London (a week's window with its clock change), calendar times in UTC and in
# London, a heavy pooled kind, an irreversible one, and a kind that skips slots past its
# catch_up when the queue is full.
WEEK = """
[settings]
slots = 2
tick = "5m"
stale_after = "15m"
housekeeping_every = "1h"

[pools.api]
slots = 1

[kinds.deploy]
command = ["true"]
every = "1h"
offset = "20m"
timeout = "10m"
irreversible = true
priority = "high"

[kinds.heavy]
command = ["true"]
every = "3h"
timeout = "12m"
weight = 2
pools = ["api"]

[kinds.pooled]
command = ["true"]
every = "30m"
offset = "5m"
timeout = "6m"
pools = ["api"]
priority = "urgent"

[kinds.nightly]
command = ["true"]
at = ["01:30", "02:30", "09:00"]
timezone = "Europe/London"
timeout = "20m"
priority = "low"

[kinds.weekly]
command = ["true"]
at = "03:10"
on = ["tue", "fri"]
timezone = "Europe/London"
timeout = "40m"
priority = "low"

[kinds.late]
command = ["true"]
at = ["05:45", "17:45"]
timeout = "5m"
catch_up = "5m"
priority = "low"

[kinds.blocker]
command = ["true"]
at = ["05:40", "17:40"]
timeout = "30m"
weight = 2
priority = "high"
"""

RUN = ("SELECT kind, due_at, claimed_at, started_at, finished_at, outcome::text, run_trigger::text,"
       " slot_row, slots, slot_at, first_slot_at, slots_covered, weight, pools, dispatcher"
       " FROM tickq.job_run ORDER BY claimed_at, kind, slot_row")


def registry_of(tmp_path: Path, text: str) -> Registry:
    path = tmp_path / "r.toml"
    path.write_text(text)
    return load_registry(path)


def copied(conn: psycopg.Connection) -> list[tuple[dt.date, int, int]]:
    """Per UTC day of the clock: the runs last written by a transaction that wrote a run claimed
    hours apart from them (the copies: a part's transaction spans 15 minutes of the clock and
    finishes runs claimed in the part before), and all its runs."""
    return conn.execute(
        "SELECT (r.claimed_at AT TIME ZONE 'UTC')::date, count(*) FILTER (WHERE EXISTS ("
        " SELECT FROM tickq.job_run AS o"
        " WHERE o.xmin = r.xmin AND o.claimed_at > r.claimed_at + interval '2 hours')), count(*)"
        " FROM tickq.job_run AS r GROUP BY 1 ORDER BY 1").fetchall()


def both_ways(server: str, registry: Registry) -> tuple[list, list, list, Window]:
    """The first window in one CALL (copying what repeats) and part by part (nothing copied):
    (runs, report) each, and per day how many runs the CALL copied (`copied`)."""
    results = []
    for whole in (True, False):
        with api.scratch(server) as conn:
            api.load(conn, registry)
            window = api.windows(conn)[0]
            if whole:
                api.simulate_window(conn, window, None, steady=True)
                days = copied(conn)
            else:
                api.start_steady(conn, window.starts_at)
                for part in api.parts(conn, window.starts_at, window.ends_at):
                    api.move_part(conn, *part, None)
            results.append((conn.execute(RUN).fetchall(),
                            api.worst_waits(conn, api.merge(conn, None, 1, window)), window))
    (runs, report, window), (alone_runs, alone_report, alone_window) = results
    assert window == alone_window, "the pair fell either side of midnight: run it again"
    assert runs == alone_runs
    assert report == alone_report
    return runs, report, days, window


@pytest.mark.parametrize("name", ["real_fix", "week"])
def test_a_repeated_stretch_gives_the_runs_the_clock_would_make(
    pg_server_url: str, tmp_path: Path, name: str
) -> None:
    registry = (load_registry(REPO / "examples" / "starvation" / "real_fix.toml")
                if name == "real_fix" else registry_of(tmp_path, WEEK))
    runs, report, days, window = both_ways(pg_server_url, registry)
    # Every whole day of the week but the first (nothing before it to copy) copies most of the
    # day before: a day after a copied day too, whose rest points are the copy's.
    whole_days = [d for d in days if window.starts_at.date() < d[0] < window.ends_at.date()]
    assert len(whole_days) >= 6, days  # a week and 40 minutes, from 23:35 local time
    assert [d for d in whole_days[1:] if d[1] * 2 < d[2]] == [], days
    assert sum(d[1] for d in days) > len(runs) // 4  # most days repeat most of the day before
    assert any(k.runs for k in report)
    if name == "week":  # what the stretches hold: arming, skipped slots, heavy pooled runs
        assert sum(r[14] == "simulator: first run" for r in runs) == 1
        assert sum(r[5] == "skipped" for r in runs) > 7
        assert any(r[12] == 2 and r[13] == ["api"] for r in runs)


def test_a_cadence_that_does_not_divide_a_day_repeats_only_where_it_has_no_slot(
    pg_server_url: str, tmp_path: Path
) -> None:
    """Every 55 minutes: a day later its slots are 10 minutes off, so only the short stretches
    holding none of its slots (and none a day later) may repeat; the runs are still the clock's."""
    week = sum(d[1] for d in both_ways(pg_server_url, registry_of(tmp_path, WEEK))[2])
    copies = sum(d[1] for d in both_ways(pg_server_url, registry_of(
        tmp_path, WEEK.replace('every = "3h"', 'every = "55m"')))[2])
    assert copies < week // 2


def test_a_copied_part_s_runs_by_kind_are_worked_out_only_when_a_copy_reads_them(
    pg_server_url: str, tmp_path: Path
) -> None:
    """tickq.simulate_window keeps the runs going on by kind at each part's start for later
    copies (the ids tickq.simulation_remap gives a copied part): those of a copied part are
    worked out only where a later copy starts or ends there, not for every part copied (most
    are never read); and where a copy ended, the mark (tickq.simulation_mark) builds neither
    them (tickq.simulation_running) nor the digest without slot row numbers
    (tickq.simulation_unlabelled): the copy knows both. The runs stay the clock's (the test
    above, with WEEK)."""
    with api.scratch(pg_server_url) as conn:
        api.load(conn, registry_of(tmp_path, WEEK))
        conn.execute("SET track_functions = 'all'")
        window = api.windows(conn)[0]
        api.simulate_window(conn, window, None, steady=True)
        conn.execute("SELECT pg_stat_force_next_flush()")
        conn.execute("SELECT pg_stat_clear_snapshot()")
        calls = dict(conn.execute(
            "SELECT funcname, calls FROM pg_stat_user_functions WHERE funcname IN ("
            "'simulation_copy',"
            " 'simulation_remap', 'simulation_mark', 'simulation_running', 'simulation_unlabelled')"
            ).fetchall())
        parts = conn.execute("SELECT count(*) FROM tickq.simulation_parts(%s, %s)",
                             (window.ends_at, window.starts_at)).fetchone()[0]
    assert calls["simulation_copy"] >= 6, calls
    # one remap in each copy (its restore's runs), and a few read for the next copies; the
    # copied parts are most of the week's 677 parts
    assert calls["simulation_remap"] <= 3 * calls["simulation_copy"] < parts // 2, (calls, parts)
    # every copy ends at a part of the window, marked there
    marked = calls["simulation_mark"] - calls["simulation_copy"]
    assert calls["simulation_running"] == calls["simulation_unlabelled"] == marked, calls
