"""`tickq cancel` of a run whose dispatcher was killed (SIGKILL) mid-run: the command tells the
truth at once (on the dispatcher's host its pid is checked, so not "it stops the run within
seconds" while nothing will), the next tick on the host stops the orphaned command and records
the run `lost`, and the run is not retried: a cancelled run never runs again before its next
slot, whoever records its end. Who asked is what the database saw (its role), the OS user only
as the client's claim."""

from __future__ import annotations

import contextlib
import getpass
import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import psycopg
from pg15_cluster import Cluster
from processes import is_alive, tickq_env
from test_cancel import env, live_run, queue, run_row, start_tick, tickq, wait_for
from test_pgbouncer import reached, server

from tickq.host.ledger import Ledger, start_time

__all__ = ["queue", "server"]  # fixtures, used by name


def _runs_of(url: str, kind: str) -> int:
    with psycopg.connect(url, autocommit=True) as conn:
        (count,) = conn.execute("SELECT count(*) FROM tickq.job_run WHERE kind = %s",
                                (kind,)).fetchone()
    return count


def test_a_cancel_after_its_dispatcher_was_killed_says_so_and_is_never_retried(
    queue: dict[str, Any], own_ledger_folder: Path
) -> None:
    url, pids = queue["url"], queue["folder"] / "pids"
    tick = start_tick(queue, "sleeper")
    run_id = wait_for("sleeper claimed", lambda: live_run(url, "sleeper"))
    wait_for("sleeper started", lambda: pids.exists() and len(pids.read_text().split()) == 2)
    shell, child = (int(p) for p in pids.read_text().split())
    try:
        _cancel_and_tick(queue, tick, run_id, own_ledger_folder)
        wait_for("the whole tree gone", lambda: not is_alive(shell) and not is_alive(child), 5)
    finally:  # whatever failed: no command of this test outlives it (a retry's either)
        for group in {shell, int(pids.read_text().split()[0])}:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(group, signal.SIGKILL)


def _cancel_and_tick(queue: dict[str, Any], tick: subprocess.Popen[str], run_id: int,
                     own_ledger_folder: Path) -> None:
    url = queue["url"]
    wait_for("its ledger entry", lambda: list(own_ledger_folder.glob("*.json")))
    tick.kill()  # SIGKILL: nothing of the dispatcher is left to stop the command
    tick.wait(timeout=10)

    asked = tickq("cancel", "sleeper", "--reason", "wrong data", "--database-url", url)

    assert asked.returncode == 1, asked.stdout + asked.stderr
    assert "within seconds" not in asked.stdout + asked.stderr
    said = asked.stderr
    assert f"{socket.gethostname()}:{tick.pid} is not running" in said, said
    assert "next tick" in said and "not retried" in said, said
    row = run_row(url, run_id)
    assert (row["outcome"], row["cancel_reason"]) == ("running", "wrong data")
    with psycopg.connect(url) as conn:
        (role,) = conn.execute("SELECT session_user::text").fetchone()
    claimed = f"{getpass.getuser()}@{socket.gethostname()}"
    assert row["cancel_role"] == role
    assert row["cancel_by"].startswith(role) and row["cancel_by"].endswith(
        f"claiming to be {claimed}"), row["cancel_by"]

    after = subprocess.Popen(
        [sys.executable, "-m", "tickq.cli", "tick", "--registry", str(queue["registry"]),
         "--database-url", url], env=env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True)
    queue["ticks"].append(after)
    wait_for("the next tick to end, or a retry", lambda: after.poll() is not None
             or _runs_of(url, "sleeper") > 1)
    assert _runs_of(url, "sleeper") == 1, "the cancelled run was retried"
    out, err = after.communicate(timeout=30)
    assert after.returncode == 0, out + err
    assert "run.orphan_stopped" in out and "run.lost_released" in out, out
    row = run_row(url, run_id)
    assert row["outcome"] == "lost"
    assert (row["next_trigger"], row["attempts"], row["run_id"]) == ("schedule", 0, None)
    assert row["due_at"] == row["normal_next"]


def test_a_pid_another_process_took_is_no_sign_of_life(tmp_path: Path) -> None:
    """The ledger knows when the dispatcher holding a run started: a live process with its pid
    but another start time is not it."""
    ledger = Ledger(tmp_path / "ledger")
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        name = f"{ledger.host}:{other.pid}"
        (tmp_path / "ledger").mkdir(mode=0o700)
        (tmp_path / "ledger" / "4242.json").write_text(json.dumps({
            "pgid": 4242, "leader_started": None, "host": ledger.host, "kind": "k",
            "run_id": 7, "dispatcher": name, "dispatcher_pid": other.pid,
            "dispatcher_started": "an earlier process's start"}))
        assert ledger.dispatcher_gone(name) is True
        assert ledger.dispatcher_gone(f"{ledger.host}:{ledger.pid}") is None  # no entry
        assert ledger.dispatcher_gone(f"another-host:{other.pid}") is None
        entry = json.loads((tmp_path / "ledger" / "4242.json").read_text())
        entry["dispatcher_started"] = start_time(other.pid)
        (tmp_path / "ledger" / "4242.json").write_text(json.dumps(entry))
        assert ledger.dispatcher_gone(name) is False
    finally:
        other.kill()
        other.wait()
    assert ledger.dispatcher_gone(name) is True


def test_who_asked_is_recorded_per_call_through_a_transaction_pool(
    tmp_path: Path, server: Cluster
) -> None:
    """Through PgBouncer in transaction pooling mode (a server connection per transaction, no
    session state kept), `tickq cancel` records the role the server saw and the client's claim."""
    from test_pgbouncer import command

    registry = tmp_path / "registry.toml"
    registry.write_text('[kinds.work]\ncommand = ["true"]\nevery = "1h"\ntimeout = "1m"\n')
    with reached(server, "transaction") as (pooled, direct):
        synced = subprocess.run(command("sync", url=direct, folder=tmp_path),
                                capture_output=True, text=True, timeout=120, check=False,
                                env=tickq_env())
        assert synced.returncode == 0, synced.stdout + synced.stderr
        with psycopg.connect(direct, autocommit=True) as conn:
            conn.execute("UPDATE tickq.job_kind SET due_at = CASE WHEN name = 'work' THEN now()"
                         " ELSE 'infinity' END")
            [(run_id,)] = conn.execute("SELECT run_id FROM tickq.claim_jobs(1, 'far-host:1')"
                                       ).fetchall()

        asked = subprocess.run(command("cancel", "work", "--reason", "pooled", url=pooled,
                                       folder=tmp_path), capture_output=True, text=True,
                               timeout=120, check=False, env=tickq_env())

        assert asked.returncode == 0, asked.stdout + asked.stderr  # claimed just now: seen
        with psycopg.connect(direct) as conn:
            by, role = conn.execute("SELECT cancel_by, cancel_role FROM tickq.job_run"
                                    " WHERE id = %s", (run_id,)).fetchone()
    assert role == "postgres"
    assert by.startswith("postgres") and by.endswith(
        f", claiming to be {getpass.getuser()}@{socket.gethostname()}"), by
