"""A heavy kind among light kinds that always fit is not starved: capacity is held for it once it
has waited half of stale_after, so it is claimed within stale_after, in `tickq simulate` (the
real claim with a moved clock) and in real ticks (its due time moved half of stale_after back:
no light takes a freed slot until it is claimed); `tickq check` passes that registry, and fails
one whose pool is too small, naming the pool, and `--suggest` proposes a pool that passes.

Four light kinds share the three slots and are due again a second after each run: one always
waits, and takes the slot the next run frees, so the three slots are never free at once and
without the held capacity the kind of weight 3 would never fit. With it, its worst wait is half
of stale_after plus the runs in its way: more than half, less than the whole.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import psycopg

REPO = Path(__file__).resolve().parent.parent

# Four light kinds of 40 seconds due every second: 2.67 slots on average, always one waiting.
HEAVY = """
[settings]
slots = 3
tick = "1m"
stale_after = "10m"
capacity_margin = 0
housekeeping_every = "1d"

[kinds.heavy]
command = ["true"]
every = "30m"
timeout = "2m"
weight = 3
""" + "".join(f"""
[kinds.light{i}]
command = ["true"]
every = "1s"
timeout = "40s"
""" for i in range(4))

# Three kinds of six minutes every ten in one pool of one slot: the third waits twelve minutes.
POOL = """
[settings]
slots = 3
stale_after = "10m"
housekeeping_every = "1d"

[pools.gpu]
slots = {slots}
""" + "".join(f"""
[kinds.render{i}]
command = ["true"]
every = "10m"
timeout = "6m"
pools = ["gpu"]
""" for i in range(3))


def tickq(*args: str, url: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "TICKQ_REGISTRY")}
    env["PYTHONPATH"] = str(REPO / "python_runner")
    return subprocess.run([sys.executable, "-m", "tickq.cli", *args, "--database-url", url],
                          capture_output=True, text=True, check=False, timeout=300, env=env)


def row_of(output: str, kind: str) -> str:
    return next(line for line in output.splitlines() if line.startswith(kind + " "))


def test_check_and_simulate_claim_the_heavy_kind_within_stale_after(
    tmp_path: Path, db_url: str
) -> None:
    path = tmp_path / "heavy.toml"
    path.write_text(HEAVY)
    checked = tickq("check", "--registry", str(path), url=db_url)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "worst case fits" in checked.stdout
    # the average share counts the weight: 3 x 2m every 30m is 0.2 of a slot
    assert row_of(checked.stdout, "heavy").split()[-1] == "0.2000", checked.stdout
    assert "STARVED" not in row_of(checked.stdout, "heavy")
    simulated = tickq("simulate", "--registry", str(path), "--hours", "3", url=db_url)
    assert simulated.returncode == 0, simulated.stdout + simulated.stderr
    heavy = row_of(simulated.stdout, "heavy").split()
    assert int(heavy[2]) >= 6, simulated.stdout  # claimed every 30 minutes for 3 hours
    # held from 5m on, claimed once the runs in its way ended: past half, within stale_after
    assert heavy[3].startswith(("5m", "6m")) and heavy[4] == "-", simulated.stdout
    for i in range(4):  # and the light kinds kept running
        assert int(row_of(simulated.stdout, f"light{i}").split()[2]) > 150, simulated.stdout


def test_check_fails_a_pool_too_small_naming_it_and_suggests_a_larger_one(
    tmp_path: Path, db_url: str
) -> None:
    path = tmp_path / "pool.toml"
    path.write_text(POOL.format(slots=1))
    checked = tickq("check", "--suggest", "--registry", str(path), url=db_url)
    assert checked.returncode == 1, checked.stdout + checked.stderr
    starved = [line for line in checked.stdout.splitlines() if "longer than stale_after" in line]
    assert len(starved) == 1 and starved[0].lstrip().startswith("render2"), checked.stdout
    assert 'needs pool "gpu" (slots = 1) held by render0, render1' in starved[0], starved
    assert "a larger pool; set:\n\n[pools.gpu]\nslots = 2" in checked.stdout, checked.stdout
    path.write_text(POOL.format(slots=2))  # the suggestion, checked by the same check
    again = tickq("check", "--registry", str(path), url=db_url)
    assert again.returncode == 0, again.stdout + again.stderr


# Real ticks, in seconds: four light kinds of 2 seconds due every second in three slots, and a
# heavy kind of weight 3, due only when the test says.
REAL = """
[settings]
slots = 3
tick = "1s"
stale_after = "16s"
capacity_margin = 0
housekeeping_every = "1d"

[kinds.heavy]
command = ["true"]
every = "1h"
timeout = "10s"
weight = 3
""" + "".join(f"""
[kinds.light{i}]
command = ["sleep", "2"]
every = "1s"
timeout = "10s"
""" for i in range(4))


def wait_for(what: str, conn: psycopg.Connection, query: str, seconds: float = 120) -> Any:
    """The first row of `query` once its first column is true, polled until `seconds`."""
    deadline = time.monotonic() + seconds
    while True:
        row = conn.execute(query).fetchone()
        if row[0]:
            return row
        assert time.monotonic() < deadline, what
        time.sleep(0.1)


def test_real_ticks_hold_capacity_for_the_heavy_kind_once_it_waited_half_of_stale_after(
    tmp_path: Path, db_url: str
) -> None:
    """The lights run first, the three slots always busy; then the heavy kind is made due half
    of stale_after ago (the clock moved through its due time, not waited for). From then on no
    light is claimed until the heavy kind is: the slots the lights free are held for it."""
    path = tmp_path / "real.toml"
    path.write_text(REAL)
    assert tickq("sync", "--registry", str(path), url=db_url).returncode == 0
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "TICKQ_REGISTRY")}
    env["PYTHONPATH"] = str(REPO / "python_runner")
    tick = [sys.executable, "-m", "tickq.cli", "tick", "--registry", str(path),
            "--database-url", db_url]
    with psycopg.connect(db_url, autocommit=True) as conn:
        conn.execute("UPDATE tickq.job_kind SET due_at = 'infinity' WHERE name = 'heavy'")
        # Three dispatchers; with a kind always due, a tick claims on as its runs finish until
        # it is stopped (SIGTERM: it lets its runs end and reports them).
        ticks = [subprocess.Popen(tick, env=env, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL) for _ in range(3)]
        try:
            held_from, heavy_at, weight = _hold_for_the_heavy_kind(conn)
        finally:
            for process in ticks:
                process.send_signal(signal.SIGTERM)
            for process in ticks:
                process.wait(timeout=120)
        before = conn.execute("SELECT count(*) FROM tickq.job_run WHERE kind LIKE 'light%%'"
                              " AND claimed_at > %s AND claimed_at < %s",
                              (held_from, heavy_at)).fetchone()[0]
    assert weight == 3
    assert before == 0, f"{before} light run(s) took the slots held for the heavy kind"


def _hold_for_the_heavy_kind(conn: psycopg.Connection) -> tuple[Any, Any, int]:
    """Once three lights run, the heavy kind due half of stale_after ago; when that was (every
    claim that starts later sees it), when the heavy kind was claimed, and its run's weight."""
    wait_for("three lights run at once", conn,
             "SELECT count(*) = 3 FROM tickq.job_run WHERE outcome = 'running'")
    conn.execute("UPDATE tickq.job_kind SET due_at = now() - interval '8 seconds'"
                 " WHERE name = 'heavy'")
    [held_from] = conn.execute("SELECT now()").fetchone()
    heavy_at, weight = wait_for("the heavy kind claimed", conn, """
        SELECT max(claimed_at), max(weight) FROM tickq.job_run WHERE kind = 'heavy'""")
    wait_for("the lights ran on after it", conn, """
        SELECT count(*) > 3 FROM tickq.job_run WHERE kind LIKE 'light%'
        AND claimed_at > (SELECT claimed_at FROM tickq.job_run WHERE kind = 'heavy')""")
    return held_from, heavy_at, weight
