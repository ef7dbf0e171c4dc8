"""`tickq cancel RUN_ID|KIND [--reason TEXT]`: asks the dispatcher that holds a run, in another
process, to stop it. That dispatcher notices within its poll interval, stops the whole process
tree, and reports the run `cancelled`: no retry, no failure in the streak, the kind's next slot
as after a normal finish; who and why are recorded. A chain stops at its current step. A run
whose dispatcher is not seen is said to be so, and what will happen to it; an unknown run or
kind, or a run not running, is one line and exit 2."""

from __future__ import annotations

import getpass
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from processes import is_alive

REPO = Path(__file__).resolve().parent.parent
POLL_BOUND = 10.0  # what the dispatcher promises: a cancel is noticed within this

REGISTRY = """\
[settings]
slots = 2
retry_base = "1s"

[kinds.sleeper]
command = ["sh", "-c", "sleep 300 & echo $$ $! > {pids}; wait"]
every = "1h"
timeout = "200s"
retries = 3

[kinds.steps]
every = "1h"
timeout = "200s"
retries = 3

[[kinds.steps.steps]]
name = "first"
command = ["sh", "-c", "echo first"]
timeout = "10s"

[[kinds.steps.steps]]
name = "long"
command = ["sh", "-c", "echo $$ > {chain_pid}; exec sleep 300"]
timeout = "100s"

[[kinds.steps.steps]]
name = "last"
command = ["sh", "-c", "touch {marker}"]
timeout = "10s"

[kinds.idle]
command = ["true"]
every = "1h"
timeout = "10s"
"""


def env() -> dict[str, str]:
    out = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "TICKQ_REGISTRY")}
    out["PYTHONPATH"] = str(REPO / "python_runner")
    return out


def tickq(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tickq.cli", *args], env=env(),
                          capture_output=True, text=True, timeout=60)


@pytest.fixture
def queue(db_url: str, tmp_path: Path) -> Iterator[dict[str, Any]]:
    registry = tmp_path / "tickq.toml"
    registry.write_text(REGISTRY.format(pids=tmp_path / "pids", chain_pid=tmp_path / "chain",
                                        marker=tmp_path / "marker"))
    assert tickq("sync", "--registry", str(registry), "--database-url", db_url).returncode == 0
    with psycopg.connect(db_url, autocommit=True) as conn:
        conn.execute("UPDATE tickq.job_kind SET due_at = 'infinity'")
    started: list[subprocess.Popen[str]] = []
    yield {"url": db_url, "registry": registry, "folder": tmp_path, "ticks": started}
    for proc in started:
        if proc.poll() is None:
            proc.kill()
        proc.wait()


def start_tick(queue: dict[str, Any], kind: str) -> subprocess.Popen[str]:
    with psycopg.connect(queue["url"], autocommit=True) as conn:
        conn.execute("UPDATE tickq.job_kind SET due_at = now() - interval '1 second' "
                     "WHERE name = %s", (kind,))
    proc = subprocess.Popen(
        [sys.executable, "-m", "tickq.cli", "tick", "--registry", str(queue["registry"]),
         "--database-url", queue["url"]], env=env(), stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True)
    queue["ticks"].append(proc)
    return proc


def wait_for(what: str, check, seconds: float = 60.0):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.05)
    raise AssertionError(f"not within {seconds}s: {what}")


def live_run(url: str, kind: str) -> int | None:
    with psycopg.connect(url, autocommit=True) as conn:
        (run_id,) = conn.execute("SELECT run_id FROM tickq.job_kind WHERE name = %s",
                                 (kind,)).fetchone()
    return run_id


def run_row(url: str, run_id: int) -> dict[str, Any]:
    with psycopg.connect(url, autocommit=True) as conn, conn.cursor() as cur:
        cur.execute("SELECT r.outcome::text AS outcome, r.cancel_reason, r.cancel_by, "
                    "r.cancel_role, r.cancel_requested_at, r.output_tail, k.failure_streak, "
                    "k.attempts, k.next_trigger::text AS next_trigger, k.due_at, k.run_id, "
                    "tickq.next_slot(tickq.schedule_of(k), r.finished_at) AS normal_next "
                    "FROM tickq.job_run AS r JOIN tickq.job_kind AS k "
                    "ON k.name = r.kind WHERE r.id = %s", (run_id,))
        names = [c.name for c in cur.description]
        return dict(zip(names, cur.fetchone(), strict=True))


def ended(url: str, run_id: int) -> dict[str, Any] | None:
    row = run_row(url, run_id)
    return row if row["outcome"] != "running" else None


def test_cancel_by_kind_stops_the_tree_of_another_dispatchers_run(queue: dict[str, Any]) -> None:
    url, pids = queue["url"], queue["folder"] / "pids"
    tick = start_tick(queue, "sleeper")
    run_id = wait_for("sleeper claimed", lambda: live_run(url, "sleeper"))
    wait_for("sleeper started", lambda: pids.exists() and len(pids.read_text().split()) == 2)
    shell, child = (int(p) for p in pids.read_text().split())

    result = tickq("cancel", "sleeper", "--reason", "disk full", "--database-url", url)
    assert result.returncode == 0, result.stderr
    assert f"run {run_id}" in result.stdout and "sleeper" in result.stdout

    row = wait_for("the run ended", lambda: ended(url, run_id), POLL_BOUND)
    assert row["outcome"] == "cancelled"
    assert row["cancel_reason"] == "disk full"
    assert getpass.getuser() in row["cancel_by"]
    with psycopg.connect(url) as conn:
        (role,) = conn.execute("SELECT session_user::text").fetchone()
    assert row["cancel_role"] == role
    assert "cancelled" in row["output_tail"] and "disk full" in row["output_tail"]
    # no retry, no failure: the next slot as after a normal finish
    assert (row["failure_streak"], row["attempts"], row["next_trigger"]) == (0, 0, "schedule")
    assert row["due_at"] == row["normal_next"]
    assert row["run_id"] is None
    wait_for("the whole tree gone", lambda: not is_alive(shell) and not is_alive(child), 5)
    tick.wait(timeout=30)


def test_a_chain_stops_at_its_current_step(queue: dict[str, Any]) -> None:
    url, pid_file, marker = (queue["url"], queue["folder"] / "chain", queue["folder"] / "marker")
    tick = start_tick(queue, "steps")
    run_id = wait_for("steps claimed", lambda: live_run(url, "steps"))
    wait_for("step long started", lambda: pid_file.exists() and pid_file.read_text().strip())
    step_pid = int(pid_file.read_text())

    result = tickq("cancel", str(run_id), "--database-url", url)
    assert result.returncode == 0, result.stderr

    row = wait_for("the chain ended", lambda: ended(url, run_id), POLL_BOUND)
    assert row["outcome"] == "cancelled" and row["next_trigger"] == "schedule"
    assert row["failure_streak"] == 0 and row["due_at"] == row["normal_next"]
    with psycopg.connect(url, autocommit=True) as conn:
        steps = conn.execute("SELECT name, outcome::text FROM tickq.job_step WHERE run_id = %s "
                             "ORDER BY n", (run_id,)).fetchall()
    assert steps == [("first", "ok"), ("long", "cancelled")]
    assert not marker.exists()
    wait_for("the step's process gone", lambda: not is_alive(step_pid), 5)
    tick.wait(timeout=30)


def test_unknown_or_not_running_is_one_line_and_exit_2(queue: dict[str, Any]) -> None:
    url = queue["url"]
    for target, says in (("nope", 'no kind "nope"'), ("999999", "no run 999999"),
                         ("idle", 'kind "idle" has no run in progress')):
        result = tickq("cancel", target, "--database-url", url)
        assert result.returncode == 2, (target, result.stderr)
        assert says in result.stderr and len(result.stderr.strip().splitlines()) == 1
        assert "Traceback" not in result.stderr


def test_a_run_whose_dispatcher_is_not_seen_is_said_to_be_lost_after_its_lease(
    queue: dict[str, Any],
) -> None:
    url = queue["url"]
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("UPDATE tickq.job_kind SET due_at = now() - interval '1 second' "
                     "WHERE name = 'idle'")
        [(run_id,)] = conn.execute(
            "SELECT run_id FROM tickq.claim_jobs(1, 'gone-host:1')").fetchall()
        # claimed a while ago by a dispatcher that has not polled since
        conn.execute("UPDATE tickq.job_run SET claimed_at = now() - interval '2 minutes' "
                     "WHERE id = %s", (run_id,))
    result = tickq("cancel", "idle", "--reason", "stuck", "--database-url", url)
    assert result.returncode == 1, result.stderr
    assert "gone-host:1" in result.stderr and "lost" in result.stderr
    assert "lease" in result.stderr
    row = run_row(url, run_id)
    assert row["outcome"] == "running" and row["cancel_reason"] == "stuck"



def test_an_agent_run_is_stopped_during_its_turn(tmp_path: Path, db_url: str) -> None:
    import uuid

    from chat_server import ChatServer, stall
    from test_agents import KEY, KEY_ENV, last_run, marked_processes, save_agent, write_registry

    marker = uuid.uuid4().hex
    with ChatServer([stall(40)]) as server:
        registry = write_registry(tmp_path, server.base_url)
        save_agent(db_url, registry, "slowpoke", timeout=50)
        proc = subprocess.Popen(
            [sys.executable, "-m", "tickq.cli", "tick", "--registry", str(registry),
             "--database-url", db_url], cwd=tmp_path,
            env={**env(), KEY_ENV: KEY, "TEST_MARKER": marker}, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True)
        try:
            run_id = wait_for("the agent claimed", lambda: live_run(db_url, "agent.slowpoke"))
            wait_for("its turn asked the model", lambda: server.requests)
            result = tickq("cancel", "agent.slowpoke", "--reason", "wrong prompt",
                           "--database-url", db_url)
            assert result.returncode == 0, result.stderr
            row = wait_for("the run ended", lambda: ended(db_url, run_id), POLL_BOUND)
            proc.wait(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    assert row["outcome"] == "cancelled" and row["cancel_reason"] == "wrong prompt"
    assert row["next_trigger"] == "schedule" and row["failure_streak"] == 0
    assert last_run(db_url, "slowpoke")["outcome"] == "cancelled"
    assert marked_processes(marker) == []


def test_a_cancelled_run_checks_in_as_a_log_entry_not_a_failure(
    db_url: str, tmp_path: Path
) -> None:
    import uuid

    from test_pings import Receiver

    receiver, secret = Receiver(), uuid.uuid4().hex
    try:
        registry = tmp_path / "pinged.toml"
        registry.write_text(f"""\
[kinds.pinged]
command = ["sh", "-c", "echo working; exec sleep 300"]
every = "1h"
timeout = "200s"
ping_url = "{receiver.base}/ok/{secret}"
""")
        queue = {"url": db_url, "registry": registry, "ticks": []}
        assert tickq("sync", "--registry", str(registry), "--database-url", db_url).returncode == 0
        tick = start_tick(queue, "pinged")
        run_id = wait_for("pinged claimed", lambda: live_run(db_url, "pinged"))
        wait_for("its start checked in", lambda: receiver.paths(secret))
        assert tickq("cancel", "pinged", "--database-url", db_url).returncode == 0
        wait_for("the run ended", lambda: ended(db_url, run_id), POLL_BOUND)
        tick.wait(timeout=30)
        assert receiver.paths(secret) == ["/start", "/log"]
        assert "cancelled by" in receiver.requests[-1][1]
    finally:
        for proc in queue["ticks"]:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        receiver.close()
