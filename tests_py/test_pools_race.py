"""Weights and pools under a race: the rows hold every limit however claims interleave.

Two races over the same shape of queue (slots 4; kinds of weight 1, 2 and 3; three pools, one of
slots = 1): 16 clients, each its own connection, claiming through tickq.claim_jobs and
reporting through tickq.report_run in a loop; and 8 real dispatchers (`tickq tick` processes)
started at once, again and again. Meanwhile a sampler connection reads, every few
milliseconds and in one statement, the live runs: the sum of their weights never exceeds slots,
no pool holds more runs than its slots, no kind runs twice at once, and the slot and pool rows
hold exactly what the live runs need.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import psycopg
from psycopg.types.json import Jsonb

REPO = Path(__file__).resolve().parent.parent
SLOTS = 4
POOLS = {"sf": 1, "smb": 2, "gpu": 3}
CLIENTS = 16
# 18 kinds due every second allow about 18 claims a second: 500 take about half a minute.
CLAIMS_WANTED = 500

# One statement, so one snapshot: what the live runs hold, and what they should.
SAMPLE = """
WITH live AS (SELECT r.id, r.kind, r.weight, r.pools FROM tickq.job_run AS r
    WHERE r.outcome = 'running')
SELECT
    (SELECT coalesce(sum(l.weight), 0) FROM live AS l),
    (SELECT count(*) FROM tickq.slot AS sl WHERE sl.run_id IS NOT NULL),
    (SELECT coalesce(jsonb_object_agg(p.pool, p.n), '{}') FROM (SELECT p.pool, count(*) AS n
        FROM live AS l CROSS JOIN unnest(l.pools) AS p (pool) GROUP BY p.pool) AS p),
    (SELECT coalesce(max(c.n), 0) FROM (SELECT count(*) AS n FROM live AS l GROUP BY l.kind) AS c),
    (SELECT count(*) FROM tickq.pool_slot AS ps WHERE ps.run_id IS NOT NULL),
    (SELECT coalesce(sum(cardinality(l.pools)), 0) FROM live AS l)
"""


def _kinds(every: int, command: list[str]) -> dict[str, dict]:
    kinds = {}
    for i in range(18):
        pools = [["sf"], ["smb"], ["gpu"], ["sf", "gpu"], [], [], []][i % 7]
        kinds[f"k{i:02d}"] = {
            "command": command, "every": every, "timeout": 60, "weight": 1 + i % 3,
            "pools": pools, "priority": ("urgent", "high", "normal", "low")[i % 4],
        }
    return kinds


class Sampler(threading.Thread):
    """Reads SAMPLE every few milliseconds until stopped; keeps what broke a limit."""

    def __init__(self, url: str) -> None:
        super().__init__()
        self.url = url
        self.stop = threading.Event()
        self.samples = 0
        self.busiest = 0
        self.violations: list[str] = []
        self.errors: list[BaseException] = []

    def run(self) -> None:
        try:
            with psycopg.connect(self.url, autocommit=True) as conn:
                while not self.stop.is_set():
                    weights, rows, pools, same_kind, pool_rows, pools_held = conn.execute(
                        SAMPLE).fetchone()
                    self.samples += 1
                    self.busiest = max(self.busiest, weights)
                    if weights > SLOTS:
                        self.violations.append(f"running weights {weights} > slots {SLOTS}")
                    if rows != weights or pool_rows != pools_held:
                        self.violations.append(
                            f"rows {rows}/{pool_rows} for {weights}/{pools_held}")
                    self.violations += [f"pool {p}: {n} runs > {POOLS[p]}"
                                        for p, n in pools.items() if n > POOLS[p]]
                    if same_kind > 1:
                        self.violations.append(f"{same_kind} runs of one kind at once")
                    time.sleep(0.003)
        except BaseException as exc:  # surfaced by the test
            self.errors.append(exc)


def test_sixteen_clients_never_exceed_a_weight_or_a_pool(db_url: str) -> None:
    registry = {"settings": {"slots": SLOTS, "retry_base": 1, "retry_max": 1},
                "pools": {name: {"slots": n} for name, n in POOLS.items()},
                "kinds": _kinds(1, ["true"])}
    with psycopg.connect(db_url, autocommit=True) as setup:
        setup.execute("SELECT * FROM tickq.sync_registry(%s)", (Jsonb(registry),))
    claims, errors, done = Counter[str](), [], threading.Event()
    lock = threading.Lock()

    def client(name: str) -> None:
        rng = random.Random(name)
        try:
            with psycopg.connect(db_url, autocommit=True) as conn:
                while not done.is_set():
                    rows = conn.execute("SELECT run_id, kind FROM tickq.claim_jobs(%s, %s)",
                                        (rng.randint(1, 3), name)).fetchall()
                    with lock:
                        claims[name] += len(rows)
                        if sum(claims.values()) >= CLAIMS_WANTED:
                            done.set()
                    time.sleep(rng.random() * 0.005)  # the runs hold their rows a moment
                    for run_id, _kind in rows:
                        conn.execute("SELECT * FROM tickq.report_run(%s, %s, 'ok', 0, 'out')",
                                     (run_id, name))
        except BaseException as exc:  # surfaced by the main thread
            errors.append(exc)
            done.set()

    sampler = Sampler(db_url)
    sampler.start()
    threads = [threading.Thread(target=client, args=(f"c{i}",)) for i in range(CLIENTS)]
    for t in threads:
        t.start()
    done.wait(timeout=240)
    done.set()
    for t in threads:
        t.join(timeout=60)
    sampler.stop.set()
    sampler.join(timeout=30)

    assert not errors and not sampler.errors, (errors, sampler.errors)
    assert not sampler.violations, sampler.violations[:5]
    assert sum(claims.values()) >= CLAIMS_WANTED
    assert sampler.samples > 100, sampler.samples
    assert sampler.busiest >= SLOTS - 1, sampler.busiest
    with psycopg.connect(db_url, autocommit=True) as conn:
        by_weight = dict(conn.execute(
            "SELECT weight, count(*) FROM tickq.job_run GROUP BY 1").fetchall())
        assert set(by_weight) == {1, 2, 3}, by_weight  # every weight was claimed
        sf = conn.execute(
            "SELECT count(*) FROM tickq.job_run WHERE 'sf' = ANY(pools)").fetchone()[0]
        assert sf > 0
        # nothing left held once every run was reported
        held = conn.execute("SELECT (SELECT count(*) FROM tickq.slot WHERE run_id IS NOT NULL),"
                            " (SELECT count(*) FROM tickq.pool_slot WHERE run_id IS NOT NULL)")
        assert held.fetchone() == (0, 0)


def test_eight_dispatchers_at_once_never_exceed_a_weight_or_a_pool(
    tmp_path: Path, db_url: str
) -> None:
    lines = ["[settings]", f"slots = {SLOTS}", 'tick = "1s"', 'housekeeping_every = "1d"', ""]
    for name, n in POOLS.items():
        lines += [f"[pools.{name}]", f"slots = {n}", ""]
    # Every kind made due at once before each round (its due time moved, not waited for): a
    # burst of about 9 seconds' work that keeps 8 dispatchers racing for the rows, after which
    # each tick ends (nothing runs, nothing is due: the kinds' next slots are an hour away).
    for name, kind in _kinds(3600, ["sleep", "1"]).items():
        lines += [f"[kinds.{name}]", 'command = ["sleep", "1"]', 'every = "1h"', 'timeout = "30s"',
                  f"weight = {kind['weight']}", f"pools = {kind['pools']!r}".replace("'", '"'),
                  f'priority = "{kind["priority"]}"', ""]
    path = tmp_path / "registry.toml"
    path.write_text("\n".join(lines))
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "TICKQ_REGISTRY")}
    env["PYTHONPATH"] = str(REPO / "python_runner")
    tick = [sys.executable, "-m", "tickq.cli", "tick", "--registry", str(path),
            "--database-url", db_url]
    synced = subprocess.run([*tick[:3], "sync", *tick[4:]], env=env, capture_output=True, text=True,
                            timeout=120)
    assert synced.returncode == 0, synced.stderr

    sampler = Sampler(db_url)
    sampler.start()
    failed = []
    try:
        for _round in range(3):  # 8 dispatchers at once at a burst, three times over
            with psycopg.connect(db_url, autocommit=True) as conn:
                conn.execute("UPDATE tickq.job_kind SET due_at = now() WHERE name LIKE 'k%'")
            running = [subprocess.Popen(tick, env=env, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.PIPE, text=True) for _ in range(8)]
            for process in running:
                _out, err = process.communicate(timeout=180)
                if process.returncode != 0:
                    failed.append((process.returncode, err[-2000:]))
    finally:
        sampler.stop.set()
        sampler.join(timeout=30)

    assert not failed, failed[:2]
    assert not sampler.errors, sampler.errors
    assert not sampler.violations, sampler.violations[:5]
    assert sampler.samples > 100, sampler.samples
    assert sampler.busiest >= SLOTS - 1, sampler.busiest
    with psycopg.connect(db_url, autocommit=True) as conn:
        hosts, weights, outcomes = conn.execute(
            "SELECT count(DISTINCT dispatcher), array_agg(DISTINCT weight),"
            " array_agg(DISTINCT outcome::text) FROM tickq.job_run WHERE kind LIKE 'k%'").fetchone()
        # several of them claimed (how many depends on how fast each starts on a loaded machine)
        assert hosts >= 2 and sorted(weights) == [1, 2, 3], (hosts, weights)
        assert outcomes == ["ok"], outcomes
