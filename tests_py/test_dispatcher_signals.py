"""The dispatcher through real `tickq tick` processes when it is stopped: stop signals, SIGKILL
(the lease, the orphaned command the next tick stops) and a lost database connection.

Each test writes a registry of small shell commands into tmp_path, runs the CLI as a subprocess
against its own fresh database and checks what the commands did and what tickq.job_run holds.
"""

from __future__ import annotations

import signal
import subprocess
from pathlib import Path

import psycopg
import pytest
from dispatcher_cli import (
    kill_later,
    run_tickq,
    runs,
    start_tickq,
    stop_later,
    wait_for,
    write_registry,
)
from processes import is_alive

__all__ = ["kill_later", "stop_later"]  # fixtures, used by name


# ---------------------------------------------------------------- signals


def _start_long_run(tmp_path: Path, db_url: str, conn: psycopg.Connection, procs: list,
                    work: str = "exec sleep 30") -> tuple[subprocess.Popen[str], int, int]:
    """A tick running a long command (`work`, by default 30 s of sleep); returns (tick process,
    run id, command pid)."""
    registry = write_registry(tmp_path, {"long": {
        "command": ["sh", "-c", f"echo $$ > cmd.pid; {work}"],
        "every": "1h", "timeout": "1m",
    }})
    tick = start_tickq("tick", registry, db_url)
    procs.append(tick)
    run_id = wait_for("a running run", lambda: conn.execute(
        "SELECT id FROM tickq.job_run"
        " WHERE kind = 'long' AND outcome = 'running' AND started_at IS NOT NULL"
    ).fetchone())[0]
    pid = int(wait_for("cmd.pid", lambda: (tmp_path / "cmd.pid").exists()
                       and (tmp_path / "cmd.pid").read_text().strip()))
    assert is_alive(pid)
    return tick, run_id, pid


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_stop_signal_interrupts_the_run_passes_the_signal_on_and_releases_the_lease(
    tmp_path: Path, db_url: str, conn: psycopg.Connection, stop_later: list,
    kill_later: list[int], sig: signal.Signals,
) -> None:
    tick, run_id, pid = _start_long_run(tmp_path, db_url, conn, stop_later)
    kill_later.append(pid)

    tick.send_signal(sig)
    out, err = tick.communicate(timeout=10)

    assert tick.returncode == 128 + sig, err
    assert "Traceback" not in err
    assert not is_alive(pid)
    row = next(r for r in runs(conn) if r["id"] == run_id)
    assert row["outcome"] == "interrupted"
    assert f"interrupted by dispatcher shutdown ({sig.name})" in row["output_tail"]
    assert row["exit_code"] == -sig, "the command died of the same signal"
    lease = conn.execute("SELECT run_id, leased_by FROM tickq.job_kind WHERE name = 'long'")
    assert lease.fetchone() == (None, None)
    assert "interrupted=true" in out


def test_sigkill_leaves_a_lease_that_a_later_claim_turns_into_lost(
    tmp_path: Path, db_url: str, conn: psycopg.Connection, stop_later: list,
    kill_later: list[int],
) -> None:
    tick, run_id, pid = _start_long_run(tmp_path, db_url, conn, stop_later)
    kill_later.append(pid)

    tick.kill()
    tick.communicate(timeout=10)

    assert tick.returncode == -signal.SIGKILL
    assert [(r["id"], r["outcome"]) for r in runs(conn)] == [(run_id, "running")]
    lease = conn.execute("SELECT run_id FROM tickq.job_kind WHERE name = 'long'").fetchone()
    assert lease == (run_id,)
    # The kind is not claimed again while the lease lasts.
    claimed = conn.execute("SELECT kind FROM tickq.claim_jobs(3, 'other')").fetchall()
    assert ("long",) not in claimed

    conn.execute("SELECT * FROM tickq.claim_jobs(3, 'other', now() + interval '1 day')").fetchall()

    row = next(r for r in runs(conn) if r["id"] == run_id)
    assert row["outcome"] == "lost"
    assert "lease expired" in row["output_tail"]


def test_the_next_tick_stops_a_command_whose_dispatcher_was_sigkilled(
    tmp_path: Path, db_url: str, conn: psycopg.Connection, stop_later: list,
    kill_later: list[int], own_ledger_folder: Path,
) -> None:
    beats = tmp_path / "beats"  # the command's pulse: a line every 20 ms
    tick, run_id, pid = _start_long_run(tmp_path, db_url, conn, stop_later,
                                        f"while :; do echo >> {beats}; sleep 0.02; done")
    kill_later.append(pid)
    # The dispatcher writes the ledger entry just after the command starts: kill it after that.
    wait_for("the ledger entry", lambda: (own_ledger_folder / f"{pid}.json").exists())
    tick.kill()
    tick.communicate(timeout=10)
    # Nothing stops an orphan but the next dispatcher: it beats on after its dispatcher died.
    at_death = beats.stat().st_size
    wait_for("a beat after the dispatcher's death", lambda: beats.stat().st_size >= at_death + 5)
    assert is_alive(pid)
    assert [p.name for p in own_ledger_folder.glob("*.json")] == [f"{pid}.json"]

    result = run_tickq("tick", tmp_path / "registry.toml", db_url)

    assert result.returncode == 0, result.stderr
    assert not is_alive(pid)
    [line] = [x for x in result.stdout.splitlines() if "run.orphan_stopped" in x]
    assert "kind=long" in line and f"run_id={run_id}" in line and "signal=SIGTERM" in line
    assert "orphans_stopped=1" in result.stdout
    assert list(own_ledger_folder.glob("*.json")) == []
    # Its dispatcher is provably dead: the lease is released at once as `lost` (not started
    # again in this tick: a lost run without retries waits for its next slot).
    [row] = runs(conn)
    assert (row["id"], row["outcome"]) == (run_id, "lost")
    assert "died before reporting" in row["output_tail"]
    assert "run.lost_released" in result.stdout


# ---------------------------------------------------------------- the database goes away


def test_a_lost_connection_during_a_run_is_reconnected_and_the_run_reported(
    tmp_path: Path, db_url: str, conn: psycopg.Connection, stop_later: list
) -> None:
    registry = write_registry(tmp_path, {"steady": {
        "command": ["sh", "-c", "while [ ! -e go ]; do sleep 0.02; done; echo finished-fine"],
        "every": "1h", "timeout": "30s",
    }})
    tick = start_tickq("tick", registry, db_url)
    stop_later.append(tick)
    wait_for("a started run", lambda: conn.execute(
        "SELECT id FROM tickq.job_run"
        " WHERE kind = 'steady' AND outcome = 'running' AND started_at IS NOT NULL"
    ).fetchone())

    killed = conn.execute(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
        " WHERE datname = current_database() AND pid <> pg_backend_pid()"
        " AND backend_type = 'client backend'"
    ).fetchall()
    # The dispatcher's connection is among them (a short-lived one may end first: False).
    assert any(ok for (ok,) in killed)
    (tmp_path / "go").touch()  # the run ends now, its connection gone

    out, err = tick.communicate(timeout=30)
    assert tick.returncode == 0, err
    assert "Traceback" not in err
    [row] = runs(conn)
    assert row["outcome"] == "ok"
    assert row["output_tail"] == "finished-fine\n"
    assert " run.finished " in out
    lease = conn.execute("SELECT run_id FROM tickq.job_kind WHERE name = 'steady'").fetchone()
    assert lease == (None,)
