"""The dispatcher through real `tickq tick` processes: refill, the slot cap across dispatchers,
the watchdog, drift, big output, signals and a lost connection.

Each test writes a registry of small shell commands into tmp_path, runs the CLI as a subprocess
against its own fresh database and checks what the commands wrote and what tickq.job_run holds.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from processes import is_alive

REPO = Path(__file__).resolve().parent.parent

# Appends "start KIND NS RUN_ID ATTEMPT TRIGGER" and "end KIND NS" to times.log around a sleep.
TIMED_JOB = """#!/bin/sh
echo "start $TICKQ_KIND $(date +%s%N) $TICKQ_RUN_ID $TICKQ_ATTEMPT $TICKQ_TRIGGER" >> times.log
sleep "${1:-1}"
echo "end $TICKQ_KIND $(date +%s%N)" >> times.log
"""


# ---------------------------------------------------------------- helpers


def toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value)  # a JSON string is a valid TOML basic string
    if isinstance(value, list | tuple):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    raise TypeError(value)


def write_registry(
    folder: Path, kinds: dict[str, dict[str, Any]], settings: dict[str, Any] | None = None
) -> Path:
    lines = ["[settings]"]
    lines += [f"{k} = {toml_value(v)}" for k, v in (settings or {}).items()]
    for name, table in kinds.items():
        lines += ["", f"[kinds.{name}]"]
        lines += [f"{k} = {toml_value(v)}" for k, v in table.items()]
    path = folder / "registry.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def write_script(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text)
    path.chmod(0o755)
    return path


def cli_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("DATABASE_URL", "TICKQ_REGISTRY", "TICKQ_LOG_FORMAT", "COLUMNS")}
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(REPO / "python_runner"), os.environ.get("PYTHONPATH")) if p
    )
    return env


def tickq_argv(command: str, registry: Path, db_url: str, *extra: str) -> list[str]:
    return [sys.executable, "-m", "tickq.cli", command, "--registry", str(registry),
            "--database-url", db_url, *extra]


def run_tickq(
    command: str, registry: Path, db_url: str, *extra: str, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        tickq_argv(command, registry, db_url, *extra), env=cli_env(), capture_output=True,
        text=True, timeout=timeout,
    )


def start_tickq(command: str, registry: Path, db_url: str, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        tickq_argv(command, registry, db_url, *extra), env=cli_env(), stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True,
    )


def wait_for(what: str, check: Callable[[], Any], seconds: float = 15.0) -> Any:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def runs(conn: psycopg.Connection) -> list[dict[str, Any]]:
    """The runs of the registry's kinds (built-in kinds, named tickq.*, are left out)."""
    cur = conn.execute(
        "SELECT id, kind, attempt, run_trigger::text AS run_trigger, dispatcher, started_at,"
        " outcome::text AS outcome, exit_code, output_tail FROM tickq.job_run"
        " WHERE kind NOT LIKE 'tickq.%' ORDER BY id"
    )
    names = [c.name for c in cur.description or ()]
    return [dict(zip(names, row)) for row in cur.fetchall()]


def intervals(log: Path) -> dict[str, list[tuple[int, int]]]:
    """kind -> [(start_ns, end_ns)] from a times.log written by TIMED_JOB."""
    starts: dict[str, list[int]] = {}
    done: dict[str, list[tuple[int, int]]] = {}
    for line in log.read_text().splitlines():
        word, kind, ns, *_ = line.split()
        if word == "start":
            starts.setdefault(kind, []).append(int(ns))
        else:
            done.setdefault(kind, []).append((starts[kind].pop(0), int(ns)))
    assert not any(starts.values()), f"a command started and never ended: {starts}"
    return done


def max_overlap(spans: list[tuple[int, int]]) -> int:
    events = sorted([(s, 1) for s, _ in spans] + [(e, -1) for _, e in spans])  # end before start
    most = now = 0
    for _, delta in events:
        now += delta
        most = max(most, now)
    return most


@pytest.fixture
def kill_later() -> Iterator[list[int]]:
    """Pids to SIGKILL at teardown (commands a killed dispatcher left behind)."""
    pids: list[int] = []
    yield pids
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


@pytest.fixture
def stop_later() -> Iterator[list[subprocess.Popen[str]]]:
    """tickq processes to kill if a test fails while they run."""
    procs: list[subprocess.Popen[str]] = []
    yield procs
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
        proc.communicate()


# ---------------------------------------------------------------- refill and the slot cap


def test_one_slot_runs_three_kinds_one_after_another_in_one_tick(
    tmp_path: Path, db_url: str, conn: psycopg.Connection
) -> None:
    """"three one-second kinds in one tick with one slot": refill after each run, no overlap."""
    write_script(tmp_path, "job.sh", TIMED_JOB)
    kinds = {k: {"command": ["./job.sh", "1"], "every": "1h", "timeout": "30s"}
             for k in ("k1", "k2", "k3")}
    registry = write_registry(tmp_path, kinds, {"slots": 1})

    result = run_tickq("tick", registry, db_url)

    assert result.returncode == 0, result.stderr
    spans = intervals(tmp_path / "times.log")
    assert sorted(spans) == ["k1", "k2", "k3"]
    assert all(len(s) == 1 for s in spans.values())
    ordered = sorted(s[0] for s in spans.values())
    for (_, end), (start, _) in zip(ordered, ordered[1:]):
        assert start > end, f"two commands ran at once with one slot: {ordered}"
    rows = runs(conn)
    assert [(r["kind"], r["outcome"]) for r in sorted(rows, key=lambda r: r["kind"])] == [
        ("k1", "ok"), ("k2", "ok"), ("k3", "ok")]
    # Each command was told which run it is.
    told = {}
    for line in (tmp_path / "times.log").read_text().splitlines():
        if line.startswith("start "):
            _, kind, _, run_id, attempt, trigger = line.split()
            told[kind] = (int(run_id), int(attempt), trigger)
    assert told == {r["kind"]: (r["id"], r["attempt"], r["run_trigger"]) for r in rows}
    assert all(r["run_trigger"] == "schedule" and r["attempt"] == 1 for r in rows)
    assert "tick.done" in result.stdout


def test_two_ticks_at_once_stay_within_the_slots(
    tmp_path: Path, db_url: str, conn: psycopg.Connection, stop_later: list
) -> None:
    """"Two ticks at once (a manual one beside launchd's) never run more than `slots` commands
    together and never run one kind twice at the same time"."""
    write_script(tmp_path, "job.sh", TIMED_JOB)
    names = [f"k{i}" for i in range(6)]
    kinds = {k: {"command": ["./job.sh", "0.8"], "every": "1h", "timeout": "30s"} for k in names}
    registry = write_registry(tmp_path, kinds, {"slots": 2})

    ticks = [start_tickq("tick", registry, db_url) for _ in range(2)]
    stop_later.extend(ticks)
    for proc in ticks:
        _out, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err

    spans = intervals(tmp_path / "times.log")
    assert sorted(spans) == names
    assert all(len(s) == 1 for s in spans.values()), f"a kind ran twice: {spans}"
    all_spans = [span for s in spans.values() for span in s]
    assert max_overlap(all_spans) <= 2
    assert max_overlap(all_spans) == 2, "the two slots were never used together"
    for kind, s in spans.items():
        assert max_overlap(s) == 1, f"{kind} overlapped itself"
    rows = runs(conn)
    assert sorted(r["kind"] for r in rows) == names
    assert {r["outcome"] for r in rows} == {"ok"}


# ---------------------------------------------------------------- the watchdog


def test_timeout_kills_the_command_and_its_child(
    tmp_path: Path, db_url: str, conn: psycopg.Connection, kill_later: list[int]
) -> None:
    registry = write_registry(tmp_path, {"slow": {
        "command": ["sh", "-c", "sleep 30 & echo $! > child.pid; wait"],
        "every": "1h", "timeout": "1s",
    }})
    # Left alone, the command would end ok after its child's 30 s.
    result = run_tickq("tick", registry, db_url)

    assert result.returncode == 0, result.stderr
    child = int((tmp_path / "child.pid").read_text())
    kill_later.append(child)
    assert not is_alive(child), "the command's child outlived the timeout"
    [row] = runs(conn)
    assert row["outcome"] == "timeout"
    assert "timed out after 1s" in row["output_tail"]
    streak = conn.execute("SELECT failure_streak FROM tickq.job_kind WHERE name = 'slow'")
    assert streak.fetchone() == (1,)


# ---------------------------------------------------------------- drift


def test_a_command_tampered_into_the_database_is_not_run_and_shows_as_drift(
    tmp_path: Path, db_url: str, conn: psycopg.Connection
) -> None:
    """"A command tampered into a database row is not run and shows up as drift"."""
    registry = write_registry(tmp_path, {"honest": {
        "command": ["sh", "-c", "touch ran-from-registry"], "every": "1h", "timeout": "30s",
    }})
    synced = run_tickq("sync", registry, db_url)
    assert synced.returncode == 0, synced.stderr
    updated = conn.execute(
        "UPDATE tickq.job_kind SET registry = jsonb_set(registry, '{command}',"
        " '[\"sh\",\"-c\",\"touch pwned\"]') WHERE name = 'honest'"
    )
    assert updated.rowcount == 1

    result = run_tickq("tick", registry, db_url)

    assert result.returncode == 0, result.stderr
    assert not (tmp_path / "pwned").exists()
    assert (tmp_path / "ran-from-registry").exists()
    drift_lines = [ln for ln in result.stdout.splitlines() if " registry.drift " in ln]
    assert any("kind=honest" in ln and "field=command" in ln for ln in drift_lines), result.stdout
    rows = conn.execute(
        "SELECT field, stored_value, registry_value FROM tickq.drift WHERE kind = 'honest'"
    ).fetchall()
    assert rows == [("command", ["sh", "-c", "touch pwned"],
                     ["sh", "-c", "touch ran-from-registry"])]
    # The registry won: the mirror holds its command again.
    mirror = conn.execute("SELECT registry -> 'command' FROM tickq.job_kind WHERE name = 'honest'")
    assert mirror.fetchone() == (["sh", "-c", "touch ran-from-registry"],)
    assert [r["outcome"] for r in runs(conn)] == ["ok"]


# ---------------------------------------------------------------- output


def test_fifty_megabytes_of_output_are_stored_as_the_last_64_kib(
    tmp_path: Path, db_url: str, conn: psycopg.Connection
) -> None:
    """"50 MB of output is stored as its last 64 KiB"."""
    registry = write_registry(tmp_path, {"chatty": {
        "command": ["sh", "-c",
                    "head -c 52428800 /dev/zero | tr '\\000' y; echo; echo THE-END-MARKER"],
        "every": "1h", "timeout": "60s",
    }})
    result = run_tickq("tick", registry, db_url)

    assert result.returncode == 0, result.stderr
    [row] = runs(conn)
    assert row["outcome"] == "ok"
    tail = row["output_tail"]
    assert tail.endswith("THE-END-MARKER\n")
    assert 60000 <= len(tail) <= 65536
    assert set(tail.removesuffix("\nTHE-END-MARKER\n")[-60000:]) == {"y"}


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


def test_housekeeping_runs_as_a_kind_of_the_tick_and_prunes(
    tmp_path: Path, db_url: str, conn: psycopg.Connection
) -> None:
    path = write_registry(
        tmp_path, {"job": {"command": ["true"], "every": "1d", "timeout": "1m"}},
        settings={"retention": "1d", "keep_runs": 2},
    )
    assert run_tickq("sync", path, db_url).returncode == 0
    # ten finished runs of two days ago, and a lease that expired an hour ago
    conn.execute("""
        INSERT INTO tickq.job_run (kind, attempt, run_trigger, dispatcher, claimed_at,
                                   finished_at, outcome)
        SELECT 'job', 1, 'schedule', 'old', now() - interval '2 days', now() - interval '2 days',
               'ok'
        FROM generate_series(1, 10)
    """)
    done = run_tickq("tick", path, db_url)
    assert done.returncode == 0, done.stderr
    house = conn.execute(
        "SELECT outcome::text, output_tail FROM tickq.job_run WHERE kind = 'tickq.housekeeping'"
    ).fetchall()
    assert len(house) == 1 and house[0][0] == "ok", house
    # keep_runs = 2 keeps the kind's two newest runs: the tick's own (claimed together with
    # housekeeping) and the newest of the old ten; the other nine were past the retention
    assert "runs_pruned=9" in house[0][1], house
    left = conn.execute(
        "SELECT count(*), count(*) FILTER (WHERE dispatcher = 'old') FROM tickq.job_run"
        " WHERE kind = 'job'"
    ).fetchone()
    assert left == (2, 1)
    due = conn.execute(
        "SELECT due_at - now() FROM tickq.job_kind WHERE name = 'tickq.housekeeping'"
    ).fetchone()[0]
    assert 0 < due.total_seconds() <= 15 * 60, "housekeeping comes back within 15 minutes"
