"""The simulation tells the truth about the live queue: a small registry with cadences of
seconds runs live (real ticks started every tick, real commands that sleep, a burst at aligned
instants), and each kind's worst wait (claimed_at - due_at) matches what tickq.simulate predicts
for the same registry, start time and durations, within one tick.
"""

from __future__ import annotations

import datetime as dt
import threading
import time
from pathlib import Path

import psycopg
import pytest
from psycopg.types.json import Jsonb

from tickq.db.api.check import scratch
from tickq.dispatch.tick import Dispatcher
from tickq.log import EventLog
from tickq.registry import load_registry

TICK = 2.0
WINDOW = 12.0  # seconds of live ticks

# Live ticks against the model: run with the machine to itself (the Makefile runs these last).
pytestmark = pytest.mark.alone

# Two slots; every 4 seconds two kinds are due at once, every 8 seconds a third (low) one too:
# bursts at aligned instants that the low kind waits through.
REGISTRY = """
[settings]
slots = 2
tick = "2s"
stale_after = "6s"
housekeeping_every = "1h"

[kinds.fast_a]
command = ["sleep", "2.5"]
every = "4s"
timeout = "10s"

[kinds.fast_b]
command = ["sleep", "2.5"]
every = "4s"
timeout = "10s"

[kinds.slow_c]
command = ["sleep", "3"]
every = "8s"
timeout = "10s"
priority = "low"

[kinds.mid_d]
command = ["sleep", "1"]
every = "6s"
offset = "3s"
timeout = "10s"
"""

WAITS = """
SELECT kind, max(extract(EPOCH FROM claimed_at - due_at))::float8 AS wait
FROM tickq.job_run
WHERE run_trigger = 'schedule' AND due_at <= %(last_due)s
GROUP BY kind
"""


def test_the_simulator_predicts_the_live_waits_within_a_tick(
    tmp_path: Path, db_url: str, pg_server_url: str
) -> None:
    path = tmp_path / "registry.toml"
    path.write_text(REGISTRY)
    registry = load_registry(path)
    log = EventLog("json", stream=open(tmp_path / "ticks.log", "w"))  # noqa: SIM115

    # Live: a tick every TICK seconds, each in its own thread as the OS timer would start it,
    # each claiming at its start and whenever one of its runs finishes.
    started = time.monotonic()
    threads = []
    for n in range(int(WINDOW / TICK)):
        time.sleep(max(0.0, started + n * TICK - time.monotonic()))
        dispatcher = Dispatcher(db_url, registry, log, name=f"tick-{n}")
        thread = threading.Thread(target=lambda d=dispatcher: (d.tick(), d.close()))
        thread.start()
        threads.append(thread)
    # Past the window nothing is compared: stop new work, so the ticks end with their runs.
    time.sleep(max(0.0, started + WINDOW - time.monotonic()))
    with psycopg.connect(db_url, autocommit=True) as conn:
        conn.execute("UPDATE tickq.job_kind SET enabled = false")
    for thread in threads:
        thread.join(timeout=30)
    assert not any(t.is_alive() for t in threads)

    with psycopg.connect(db_url, autocommit=True) as conn:
        start = conn.execute("SELECT min(created_at) FROM tickq.job_kind").fetchone()[0]
        last_due = start + dt.timedelta(seconds=WINDOW - 2 * TICK)
        live = dict(conn.execute(WAITS, {"last_due": last_due}).fetchall())
        # how long each kind's runs held a slot, claim to report
        held = dict(conn.execute("""
            SELECT kind, avg(extract(EPOCH FROM finished_at - claimed_at))::float8
            FROM tickq.job_run WHERE outcome = 'ok' GROUP BY kind
        """).fetchall())
        failed = conn.execute("SELECT count(*) FROM tickq.job_run WHERE outcome <> 'ok'").fetchone()
    assert failed == (0,)
    assert set(live) >= {"fast_a", "fast_b", "slow_c", "mid_d"}, live

    # The simulator: the same registry synced at the same instant, the same durations.
    with scratch(pg_server_url) as sim, sim.transaction():
        sim.execute("SELECT * FROM tickq.sync_registry(%s, %s)",
                    (Jsonb(registry.to_sync_json()), start))
        sim.execute("SELECT * FROM tickq.simulate(%s::numeric, %s, %s)",
                    (WINDOW / 3600, Jsonb(held), start)).fetchall()
        predicted = dict(sim.execute(WAITS, {"last_due": last_due}).fetchall())

    assert set(predicted) == set(live), (predicted, live)
    assert max(predicted.values()) >= TICK, f"no burst to compare: {predicted}"
    for kind, wait in live.items():
        assert abs(wait - predicted[kind]) <= TICK, (kind, live, predicted)
