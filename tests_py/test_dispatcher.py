"""The dispatcher through real `tickq tick` processes: refill, the slot cap across dispatchers,
the watchdog, drift, big output and housekeeping.

Each test writes a registry of small shell commands into tmp_path, runs the CLI as a subprocess
against its own fresh database and checks what the commands wrote and what tickq.job_run holds.
"""

from __future__ import annotations

from pathlib import Path

import psycopg
from dispatcher_cli import (
    TIMED_JOB,
    intervals,
    kill_later,
    max_overlap,
    run_tickq,
    runs,
    start_tickq,
    stop_later,
    write_registry,
    write_script,
)
from processes import is_alive

__all__ = ["kill_later", "stop_later"]  # fixtures, used by name


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
