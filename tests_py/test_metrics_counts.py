"""`tickq metrics` reads its counters from tickq.run_count, kept as runs end, instead of counting
the whole history at every scrape: the text is the one the function of 5ef5668 printed, byte
for byte, on the same queue (tests_py/data/metrics_text_5ef5668.sql), through everything that
ends or changes a run: reports of every outcome, a lease that expired (lost), a late report that
corrects it, slots merged and skipped past a catch_up, durations on and across every bucket
bound, runs pruned by housekeeping, a kind retired and one forgotten; and after the counts are
filled from the history as migration 0072 fills them on an upgrade. Prometheus's own parser
and promtool read it.

A tick with `metrics_file` is never held up or failed by the metrics: while another session
holds a lock the statement waits for, the tick ends (exit 0) with the file unwritten and a
warning, and the lock is let go only after.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import threading
from pathlib import Path

import psycopg
import pytest
from processes import tickq
from prometheus_client.parser import text_string_to_metric_families

REPO = Path(__file__).resolve().parent.parent
BEFORE = (REPO / "tests_py" / "data" / "metrics_text_5ef5668.sql").read_text()
MIGRATION = (REPO / "sql" / "chain" / "0072_run_counts.sql").read_text()
NOW = "2026-06-03 12:00Z"

REGISTRY = """{
    "settings": {"slots": 4, "tick": 300, "stale_after": 900, "retention": 86400, "keep_runs": 2,
                 "retry_base": 1, "alert_after": 3},
    "pools": {"api": {"slots": 1}},
    "kinds": {
        "fine": {"command": ["x"], "every": 3600, "timeout": 600},
        "flaky": {"command": ["x"], "every": 3600, "timeout": 600, "retries": 1},
        "heavy.one": {"command": ["x"], "every": 7200, "timeout": 900, "weight": 2,
            "pools": ["api"]},
        "late": {"command": ["x"], "every": 600, "timeout": 60, "catch_up": 900},
        "gone": {"command": ["x"], "every": 3600, "timeout": 60},
        "paused": {"command": ["x"], "every": 3600, "timeout": 60}
    }}"""
# a run's outcome and duration, cycling across every bucket bound: on it, just past it, none
DURATIONS = ["0.5 s", "1 s", "1.000001 s", "5 s", "14 s", "15 s", "59.999 s", "60 s", "299 s",
             "300 s", "301 s", "900 s", "3599 s", "3600 s", "14400 s", "14401 s", "86400 s",
             "90000 s"]
OUTCOMES = ["ok", "failed", "timeout", "cancelled", "interrupted"]


def metrics(conn: psycopg.Connection) -> tuple[str, str]:
    now = conn.execute("SELECT tickq.metrics_text(%s)", (NOW,)).fetchone()
    before = conn.execute("SELECT pg_temp.metrics_text_before(%s)", (NOW,)).fetchone()
    assert now and before
    return now[0], before[0]


def history(conn: psycopg.Connection) -> None:
    """Runs of every kind of end, through the queue's own functions, over two days."""
    day = "2026-06-01 00:00Z"
    for i, kind in enumerate(["fine", "flaky", "heavy.one", "gone", "fine", "flaky"] * 6):
        at = f"'{day}'::timestamptz + interval '{i * 37} minutes'"
        run = conn.execute(f"SELECT run_id FROM tickq.claim_manual(%s, 'd1', NULL, {at})",
                           (kind,)).fetchone()
        assert run
        if i % 11 == 5:  # lost: its lease runs out; a late report then corrects some
            conn.execute(f"SELECT tickq.expire_leases({at} + interval '1 day')")
            if i % 2:
                conn.execute(f"SELECT * FROM tickq.report_late_run(%s, 'd1', 'ok', 0, NULL, '42 s',"
                             f" {at} + interval '2 days')", (run[0],))
            continue
        conn.execute(f"SELECT * FROM tickq.report_run(%s, 'd1', %s, 0, NULL, %s::interval,"
                     f" {at} + interval '1 minute')",
                     (run[0], OUTCOMES[i % len(OUTCOMES)],
                      None if i % 13 == 0 else DURATIONS[i % len(DURATIONS)]))
    # late by three slots: a merged run (and whatever else is due, until nothing is); then a
    # catch_up skip
    conn.execute("UPDATE tickq.job_kind SET due_at = '2026-06-03 10:30Z' WHERE name = 'late'")
    for second in range(10):
        at = f"2026-06-03 11:00:{second:02d}Z"
        claimed = conn.execute("SELECT run_id FROM tickq.claim_jobs(4, 'd1', %s)", (at,)).fetchall()
        for run in claimed:
            conn.execute("SELECT * FROM tickq.report_run(%s, 'd1', 'ok', 0, NULL, '3 s', %s)",
                         (run[0], at))
    conn.execute("UPDATE tickq.job_kind SET due_at = '2026-06-03 11:10Z' WHERE name = 'late'")
    conn.execute("SELECT * FROM tickq.claim_jobs(4, 'd2', '2026-06-03 11:59Z')")
    conn.execute("SELECT tickq.pause_kind('paused', '2026-06-04 00:00Z',"
                 " p_now => '2026-06-03 11:00Z')")
    conn.execute("INSERT INTO tickq.dispatcher_tick (host, dispatcher, last_tick_at)"
                 " VALUES (E'we\"ird\\\\host', 'x:1', '2026-06-03 11:55Z')")


@pytest.fixture
def queue(db_url: str) -> psycopg.Connection:
    conn = psycopg.connect(db_url, autocommit=True)
    conn.execute("SELECT * FROM tickq.sync_registry(%s::jsonb, '2026-06-01 00:00Z')", (REGISTRY,))
    conn.execute(BEFORE)
    history(conn)
    yield conn
    conn.close()


def test_the_text_is_the_one_the_history_gave(queue: psycopg.Connection) -> None:
    now, before = metrics(queue)
    assert 'outcome="lost"} 1' in now and 'outcome="skipped"} 2' in now, now
    assert now == before
    # what housekeeping prunes stays counted; a kind retired leaves the text, one forgotten the
    # table
    pruned = queue.execute("SELECT runs_pruned FROM tickq.housekeeping(50000, %s)", (NOW,))
    assert pruned.fetchone()[0] > 0
    retired = REGISTRY.replace('"gone": {"command": ["x"], "every": 3600, "timeout": 60},', '')
    queue.execute("SELECT * FROM tickq.sync_registry(%s::jsonb, %s)", (retired, NOW))
    assert queue.execute("SELECT tickq.forget_kind('gone')").fetchone()[0] >= 0
    now, before = metrics(queue)
    assert now == before and 'kind="gone"' not in now
    assert not queue.execute("SELECT FROM tickq.run_count WHERE kind = 'gone'").fetchall()


def test_an_upgrade_counts_the_history_as_the_trigger_would(queue: psycopg.Connection) -> None:
    queue.execute("SELECT tickq.housekeeping(50000, %s)", (NOW,))  # some counts pruned ones
    every = "SELECT * FROM tickq.run_count ORDER BY kind"
    counted = queue.execute(every).fetchall()
    queue.execute("DELETE FROM tickq.run_count")
    fill = re.search(r"INSERT INTO tickq\.run_count .*?;\n", MIGRATION, re.S)
    assert fill
    queue.execute(fill.group(0))
    assert queue.execute(every).fetchall() == counted
    now, before = metrics(queue)
    assert now == before


def test_prometheus_reads_it(queue: psycopg.Connection, tmp_path: Path) -> None:
    now, _ = metrics(queue)
    families = {f.name: f for f in text_string_to_metric_families(now)}
    assert families["tickq_run_duration_seconds"].type == "histogram"
    promtool = shutil.which("promtool")
    assert promtool, "promtool is not installed: run `make test` (scripts/promtool.sh installs it)"
    done = subprocess.run([promtool, "check", "metrics"], input=now, capture_output=True, text=True,
                          check=False)
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_tick_is_not_held_up_by_its_metrics_file(db_url: str, tmp_path: Path) -> None:
    registry = tmp_path / "registry.toml"
    registry.write_text('[settings]\nmetrics_file = "metrics.prom"\ndb_lock_timeout = "10m"\n'
                        '[kinds.a]\ncommand = ["true"]\nevery = "1h"\ntimeout = "10s"\n')
    first = tickq("tick", "--registry", str(registry), "--database-url", db_url, timeout=300)
    assert first.returncode == 0, first.stdout + first.stderr  # a ran: nothing is due for an hour
    assert (tmp_path / "metrics.prom").exists()
    (tmp_path / "metrics.prom").unlink()
    holder = psycopg.connect(db_url)
    holder.execute("LOCK TABLE tickq.run_count IN ACCESS EXCLUSIVE MODE")  # held until let go
    ended = threading.Event()
    try:
        done = tickq("tick", "--registry", str(registry), "--database-url", db_url, timeout=300)
        ended.set()
    finally:
        holder.rollback()
        holder.close()
    assert ended.is_set()
    assert done.returncode == 0, done.stdout + done.stderr
    assert "metrics.unwritten" in done.stdout, done.stdout + done.stderr
    assert not (tmp_path / "metrics.prom").exists()
