"""Eight connections claiming and reporting at once: the slot limit and one lease per kind hold.

Each worker claims through tickq.claim_jobs and reports through tickq.report_run on its own
connection. What a worker holds is tracked in Python (added after the claim returns, removed
before the report is sent), so a kind held by two workers at once, or more holders than slots,
is a real double lease. A sampler counts live leases in the database the whole time.
"""

from __future__ import annotations

import random
import threading
from collections import Counter

import psycopg
from psycopg.types.json import Jsonb

SLOTS = 3
WORKERS = 8
CLAIMS_WANTED = 2000


def _registry(kinds: int) -> dict:
    return {
        "settings": {"slots": SLOTS, "retry_base": 1, "retry_max": 1},
        "kinds": {
            f"k{i:03d}": {
                "command": ["true"], "every": 1, "timeout": 60, "retries": 1,
                "priority": ("urgent", "high", "normal", "low")[i % 4],
            }
            for i in range(kinds)
        },
    }


def test_parallel_claims_never_double_lease_or_exceed_slots(db_url: str) -> None:
    with psycopg.connect(db_url, autocommit=True) as setup:
        setup.execute("SELECT * FROM tickq.sync_registry(%s)", (Jsonb(_registry(400)),))

    lock = threading.Lock()
    held: dict[str, str] = {}
    violations: list[str] = []
    claims = Counter[str]()
    reports = Counter[str]()
    sampled: list[int] = []
    done = threading.Event()
    errors: list[BaseException] = []

    def worker(name: str) -> None:
        rng = random.Random(name)
        try:
            with psycopg.connect(db_url, autocommit=True) as conn:
                while not done.is_set():
                    limit = rng.randint(1, 3)
                    rows = conn.execute(
                        "SELECT run_id, kind FROM tickq.claim_jobs(%s, %s)", (limit, name)
                    ).fetchall()
                    with lock:
                        for _run_id, kind in rows:
                            if kind in held:
                                violations.append(f"{kind} leased to {held[kind]} and {name}")
                            held[kind] = name
                        if len(held) > SLOTS:
                            violations.append(f"{len(held)} kinds held at once: {sorted(held)}")
                        claims[name] += len(rows)
                        if sum(claims.values()) >= CLAIMS_WANTED:
                            done.set()
                    for run_id, kind in rows:
                        with lock:
                            del held[kind]
                        outcome = "failed" if rng.random() < 0.2 else "ok"
                        conn.execute(
                            "SELECT * FROM tickq.report_run(%s, %s, %s, %s, %s)",
                            (run_id, name, outcome, 0 if outcome == "ok" else 1, "out"),
                        )
                        with lock:
                            reports[name] += 1
        except BaseException as exc:  # surfaced by the main thread
            errors.append(exc)
            done.set()

    def sampler() -> None:
        with psycopg.connect(db_url, autocommit=True) as conn:
            while not done.is_set():
                live = conn.execute(
                    "SELECT count(*) FROM tickq.job_kind WHERE run_id IS NOT NULL"
                ).fetchone()[0]
                sampled.append(live)

    threads = [threading.Thread(target=worker, args=(f"d{i}",)) for i in range(WORKERS)]
    threads.append(threading.Thread(target=sampler))
    for t in threads:
        t.start()
    done.wait(timeout=240)
    done.set()
    for t in threads:
        t.join(timeout=60)

    assert not errors, errors
    assert not violations, violations[:5]
    total = sum(claims.values())
    assert total >= CLAIMS_WANTED
    assert sum(reports.values()) == total, "every claim was reported"
    assert len(sampled) > 50 and max(sampled) <= SLOTS, (len(sampled), max(sampled))
    assert max(sampled) == SLOTS, "the sampler saw the slots full at least once"
    assert len([c for c in claims.values() if c > 0]) == WORKERS, claims

    with psycopg.connect(db_url, autocommit=True) as conn:
        runs, running, per_kind_max = conn.execute(
            """
            SELECT count(*), count(*) FILTER (WHERE outcome = 'running'),
                   (SELECT max(n) FROM (SELECT count(*) AS n FROM tickq.job_kind
                                        WHERE run_id IS NOT NULL GROUP BY name) AS x)
            FROM tickq.job_run
            """
        ).fetchone()
        assert runs == total and running == 0 and per_kind_max is None
        retried = conn.execute(
            "SELECT count(*) FROM tickq.job_run WHERE run_trigger = 'retry'"
        ).fetchone()[0]
        assert retried > 0, "failures were retried"
