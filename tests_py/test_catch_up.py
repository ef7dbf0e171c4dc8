"""catch_up with real ticks: a kind that slept past its window runs nothing and records its old
slots as one `skipped` run (history, status and metrics say so, nothing warns or alerts), while
a kind without catch_up merges the same slots into one run, as always."""

from __future__ import annotations

import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path

import psycopg
from test_cli import registry_file, tickq

REGISTRY = """\
[settings]
stale_after = "15m"

[kinds.nightly]
command = ["touch", "nightly-ran"]
at = "{at}"
timezone = "UTC"
timeout = "30s"
catch_up = "30m"

[kinds.merged]
command = ["touch", "merged-ran"]
at = "{at}"
timezone = "UTC"
timeout = "30s"
"""


def test_a_kind_that_slept_past_its_catch_up_runs_nothing_and_records_skipped(
    tmp_path: Path, db_url: str, conn: psycopg.Connection
) -> None:
    # A daily slot two hours ago: later than 30 minutes, whenever the test runs.
    slot = (datetime.now(UTC) - timedelta(hours=2)).replace(second=0, microsecond=0)
    path = registry_file(tmp_path, REGISTRY.format(at=f"{slot:%H:%M}"))
    assert tickq("sync", "--registry", str(path), "--database-url", db_url).returncode == 0
    # Asleep since the day before: two slots missed.
    conn.execute("UPDATE tickq.job_kind SET due_at = %s WHERE name IN ('nightly', 'merged')",
                 [slot - timedelta(days=1)])
    result = tickq("tick", "--registry", str(path), "--database-url", db_url)
    assert result.returncode == 0, result.stderr

    assert not (tmp_path / "nightly-ran").exists(), "a skipped slot starts no command"
    assert (tmp_path / "merged-ran").exists(), "without catch_up the slots merge into one run"
    runs = conn.execute(
        "SELECT kind, outcome::text, started_at, slot_at, first_slot_at, slots_covered"
        " FROM tickq.job_run WHERE kind IN ('nightly', 'merged') ORDER BY kind").fetchall()
    assert runs == [
        ("merged", "ok", runs[0][2], slot, slot - timedelta(days=1), 2),
        ("nightly", "skipped", None, slot, slot - timedelta(days=1), 2),
    ], runs
    [(due_at, streak)] = conn.execute(
        "SELECT due_at, failure_streak FROM tickq.job_kind WHERE name = 'nightly'").fetchall()
    assert (due_at, streak) == (slot + timedelta(days=1), 0), "on to its next slot, no failure"
    assert "kind.stale" not in result.stderr, result.stderr
    alerts = conn.execute("SELECT count(*) FROM tickq.alert WHERE kind = 'nightly'").fetchone()
    assert alerts == (0,)

    history = tickq("history", "nightly", "--registry", str(path), "--database-url", db_url)
    assert history.returncode == 0, history.stderr
    assert "skipped" in history.stdout, history.stdout
    status = tickq("status", "--wide", "--registry", str(path), "--database-url", db_url)
    assert any("nightly" in line and "skipped" in line for line in status.stdout.splitlines()), (
        status.stdout)
    [(metrics,)] = conn.execute("SELECT tickq.metrics_text()").fetchall()
    assert 'tickq_runs_total{kind="nightly",outcome="skipped"} 1' in metrics


def test_a_catch_up_the_database_refuses_names_the_key(tmp_path: Path, db_url: str) -> None:
    path = registry_file(tmp_path, REGISTRY.format(at="06:00").replace('"30m"', '"400d"'))
    result = tickq("check", "--registry", str(path), "--database-url", db_url)
    assert result.returncode == 2, result.stdout + result.stderr
    assert 'kind "nightly", key "catch_up": must be a duration from 1s to 366d' in result.stderr


# Deployed on the hour (simulate --at), nothing waits an hour: the hog runs first, small and the
# built-in housekeeping kind wait behind it 50 and 51 minutes.
SIMULATED = """\
[settings]
slots = 1
stale_after = "1h"

[kinds.hog]
command = ["true"]
every = "1h"
timeout = "50m"
priority = "high"

[kinds.small]
command = ["true"]
every = "5m"
timeout = "1m"
"""
ON_THE_HOUR = "2027-01-04T00:00:00Z"


def simulate_at(path: Path, db_url: str, at: str) -> subprocess.CompletedProcess[str]:
    return tickq("simulate", "--registry", str(path), "--database-url", db_url, "--at", at,
                 timeout=300)


def test_simulate_names_a_kind_whose_slots_a_full_queue_makes_it_skip(
    tmp_path: Path, db_url: str
) -> None:
    """The simulator runs the real claim: a kind that waits behind the hog less than stale_after
    passes; with a catch_up shorter than that wait its slots are skipped, which starves it."""
    path = registry_file(tmp_path, SIMULATED)
    waits = simulate_at(path, db_url, ON_THE_HOUR)
    assert waits.returncode == 0, waits.stdout + waits.stderr
    path.write_text(SIMULATED + 'catch_up = "10m"\n')
    skips = simulate_at(path, db_url, ON_THE_HOUR)
    assert skips.returncode == 1, skips.stdout + skips.stderr
    starved = [line for line in skips.stdout.splitlines() if "small" in line]
    assert starved and "hog" in skips.stdout, skips.stdout


def test_simulate_deploys_the_registry_at_the_time_it_is_given(
    tmp_path: Path, db_url: str
) -> None:
    """The same registry deployed nine minutes past the hour: the hog's first run ends a minute
    before the next hour, small takes that minute, the hog's next slot comes first, and the
    housekeeping kind waits behind two runs of the hog, 1h41m. A time without an offset is UTC."""
    path = registry_file(tmp_path, SIMULATED)
    for at in ("2027-01-04T00:09:00+00:00", "2027-01-04T01:09:00+01:00", "2027-01-04T00:09"):
        late = simulate_at(path, db_url, at)
        assert late.returncode == 1, late.stdout + late.stderr
        assert "simulated 2027-01-04 00:09 UTC to " in late.stdout, late.stdout
        [housekeeping] = [line.split() for line in late.stdout.splitlines()
                          if line.startswith("tickq.housekeeping")]
        assert housekeeping[3:5] == ["1h41m", "STARVED"], late.stdout
    bad = simulate_at(path, db_url, "next tuesday")
    assert bad.returncode == 2, bad.stdout + bad.stderr
    assert "--at" in bad.stderr and "ISO 8601" in bad.stderr, bad.stderr
