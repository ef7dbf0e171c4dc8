"""An operator's everyday with real `tickq` processes: `tickq run` by hand, retries inside
the tick, pauses and resumes, and the embedded server's `server status` and `stop`."""

from __future__ import annotations

import select
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import psycopg
from dispatcher_cli import (
    cli_env,
    run_tickq,
    tickq_argv,
    write_registry,
)
from processes import is_alive

# ---------------------------------------------------------------- tickq run


def test_run_streams_the_output_as_it_comes_and_exits_1_when_the_run_fails(
    tmp_path: Path, db_url: str, conn: psycopg.Connection
) -> None:
    registry = write_registry(tmp_path, {
        "slow": {"command": ["sh", "-c", "echo first; while [ ! -e go ]; do sleep 0.05; done; "
                             "echo second; exit 3"], "every": "1h", "timeout": "30s"},
        "stuck": {"command": ["sleep", "30"], "every": "1h", "timeout": "1s"},
        "missing": {"command": ["./no-such-program"], "every": "1h", "timeout": "30s"},
    })
    run = subprocess.Popen(tickq_argv("run", registry, db_url, "slow"), env=cli_env(),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert run.stdout is not None
        # The first line arrives while the command still runs (it waits for `go`).
        readable, _, _ = select.select([run.stdout], [], [], 15)
        assert readable, "no output while the command runs"
        assert run.stdout.readline() == "first\n"
        assert run.poll() is None
        (tmp_path / "go").touch()
        rest, err = run.communicate(timeout=30)
    finally:
        if run.poll() is None:
            run.kill()
    assert rest == "second\n"
    assert run.returncode == 1
    [(run_id, tail)] = conn.execute(
        "SELECT id, output_tail FROM tickq.job_run WHERE kind = 'slow'").fetchall()
    assert tail == "first\nsecond\n", "the tail is kept as well"
    assert err.splitlines()[-1] == f"tickq: run {run_id} of slow: failed, exit 3, " + \
        err.splitlines()[-1].rsplit(", ", 1)[1]

    stuck = run_tickq("run", registry, db_url, "stuck")
    assert stuck.returncode == 1
    assert "of stuck: timeout" in stuck.stderr.splitlines()[-1]

    missing = run_tickq("run", registry, db_url, "missing")
    assert missing.returncode == 1
    assert "cannot start '" in missing.stderr and "/no-such-program'" in missing.stderr
    assert "of missing: failed," in missing.stderr.splitlines()[-1]


def test_run_help_names_its_exit_statuses(tmp_path: Path) -> None:
    done = subprocess.run(tickq_argv("run", tmp_path / "r.toml", "x", "--help")[:4] + ["--help"],
                          env=cli_env(), capture_output=True, text=True, timeout=30)
    assert done.returncode == 0
    assert "0        the run ended ok" in done.stdout
    assert "failed, timed out, could not start" in done.stdout


# ---------------------------------------------------------------- retries inside the tick


def test_a_retry_shorter_than_the_tick_runs_in_the_same_tick(
    tmp_path: Path, db_url: str, conn: psycopg.Connection
) -> None:
    """retry_base = 2s with a one-day tick: the retry runs about 2 s after the failure, in the
    same tick, rather than at the next tick."""
    registry = write_registry(tmp_path, {"flaky": {
        "command": ["sh", "-c", "if [ -e failed ]; then echo ok; exit 0; fi; touch failed; exit 1"],
        "every": "1d", "timeout": "30s", "retries": 2,
    }}, {"tick": "1d", "retry_base": "2s"})

    result = run_tickq("tick", registry, db_url)  # a tick that stayed a day would time out

    assert result.returncode == 0, result.stderr
    rows = conn.execute(
        "SELECT attempt, run_trigger::text, outcome::text, claimed_at FROM tickq.job_run"
        " WHERE kind = 'flaky' ORDER BY id").fetchall()
    assert [r[:3] for r in rows] == [(1, "schedule", "failed"), (2, "retry", "ok")]
    gap = (rows[1][3] - rows[0][3]).total_seconds()
    assert gap >= 2, gap  # not before its backoff (a lower bound: no load can break it)
    assert "tick.waiting" in result.stdout


def test_a_retry_is_claimed_when_due_while_another_run_goes_on(
    tmp_path: Path, db_url: str, conn: psycopg.Connection
) -> None:
    registry = write_registry(tmp_path, {
        "flaky": {"command": ["sh", "-c", "if [ -e failed ]; then touch retried; exit 0; fi; "
                              "touch failed; exit 1"], "every": "1d", "timeout": "30s",
                  "retries": 1},
        # goes on until the retry has run (or, were it claimed only after slow, to its timeout)
        "slow": {"command": ["sh", "-c", "while [ ! -e retried ]; do sleep 0.02; done"],
                 "every": "1d", "timeout": "30s"},
    }, {"tick": "1d", "retry_base": "1s", "slots": 2})

    assert run_tickq("tick", registry, db_url).returncode == 0

    retry, slow = conn.execute(
        "SELECT (SELECT claimed_at FROM tickq.job_run WHERE kind = 'flaky' AND attempt = 2),"
        " (SELECT finished_at FROM tickq.job_run WHERE kind = 'slow')").fetchone()
    assert retry is not None and retry < slow, "claimed when due, not when slow finished"


def test_a_tick_does_not_stay_for_cadences_or_retries_past_the_next_tick(
    tmp_path: Path, db_url: str, conn: psycopg.Connection
) -> None:
    registry = write_registry(tmp_path, {
        "fast": {"command": ["true"], "every": "1m", "timeout": "30s"},
        "flaky": {"command": ["false"], "every": "1d", "timeout": "30s", "retries": 2},
    }, {"tick": "5m", "retry_base": "10m"})

    result = run_tickq("tick", registry, db_url)

    assert result.returncode == 0, result.stderr
    assert "tick.waiting" not in result.stdout  # what a tick that stays says first
    assert conn.execute("SELECT count(*) FROM tickq.job_run WHERE kind NOT LIKE 'tickq.%'"
                        ).fetchone() == (2,)


# ---------------------------------------------------------------- pause and resume


def test_a_paused_kind_is_skipped_by_ticks_runs_by_hand_and_resumes(
    tmp_path: Path, db_url: str, conn: psycopg.Connection
) -> None:
    registry = write_registry(tmp_path, {
        "send_email": {"command": ["sh", "-c", "echo sent >> sent.log"], "every": "1m",
                       "timeout": "30s"},
    })
    assert run_tickq("sync", registry, db_url).returncode == 0

    paused = run_tickq("pause", registry, db_url, "send_email", "--for", "2h",
                       "--reason", "smtp down")
    assert paused.returncode == 0, paused.stderr
    assert paused.stdout.startswith("paused send_email until ")
    assert paused.stdout.rstrip().endswith(": smtp down")

    tick = run_tickq("tick", registry, db_url)
    assert tick.returncode == 0, tick.stderr
    assert not (tmp_path / "sent.log").exists(), "a paused kind is not claimed"
    status = run_tickq("status", registry, db_url)
    [line] = [x for x in status.stdout.splitlines() if x.startswith("send_email")]
    assert "paused" in line and "smtp down" in status.stdout

    by_hand = run_tickq("run", registry, db_url, "send_email")
    assert by_hand.returncode == 0, by_hand.stderr
    assert (tmp_path / "sent.log").read_text() == "sent\n"

    # The registry edits nothing of the pause; resume ends it, and the next tick runs the kind.
    assert run_tickq("sync", registry, db_url).returncode == 0
    assert conn.execute("SELECT paused_reason FROM tickq.job_kind WHERE name = 'send_email'"
                        ).fetchone() == ("smtp down",)
    resumed = run_tickq("resume", registry, db_url, "send_email")
    assert (resumed.returncode, resumed.stdout) == (0, "resumed send_email\n")
    conn.execute("UPDATE tickq.job_kind SET due_at = now() WHERE name = 'send_email'")
    assert run_tickq("tick", registry, db_url).returncode == 0
    assert (tmp_path / "sent.log").read_text() == "sent\nsent\n"


def test_a_mistyped_kind_name_gets_a_suggestion(tmp_path: Path, db_url: str) -> None:
    registry = write_registry(tmp_path, {
        "send_email": {"command": ["true"], "every": "1h", "timeout": "30s"},
        "weekly_ingest": {"command": ["true"], "every": "1h", "timeout": "30s"},
    })
    assert run_tickq("sync", registry, db_url).returncode == 0

    for command in ("pause", "resume", "run"):
        result = run_tickq(command, registry, db_url, "send_emial")
        assert result.returncode == 1, result.stderr
        assert result.stderr.splitlines()[-1].endswith('(did you mean "send_email"?)'), command

    far = run_tickq("pause", registry, db_url, "zzz")
    assert "(the kinds: send_email, tickq.housekeeping, weekly_ingest)" in far.stderr
    assert run_tickq("pause", registry, db_url, "send_email", "--until", "garbage"
                     ).returncode == 2


# ---------------------------------------------------------------- the embedded server


def test_server_status_and_stop_for_the_embedded_postgresql() -> None:
    # Not under pytest's tmp_path: as root, the server runs as a user of its own, which must
    # be able to reach the folder (the test server of conftest.py lives in /tmp the same way).
    folder = Path(tempfile.mkdtemp(prefix="tickq-server-test-"))
    folder.chmod(0o711)  # tickq opens no folder it did not create: the test does, as conftest
    try:
        _server_status_and_stop(folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _server_status_and_stop(folder: Path) -> None:
    env = {**cli_env(), "TICKQ_DATA_DIR": str(folder / "data")}

    def tickq(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "tickq.cli", *args], env=env,
                              capture_output=True, text=True, timeout=120)

    assert tickq("server", "status").returncode == 1
    try:
        assert tickq("migrate").returncode == 0  # starts it
        status = tickq("server", "status")
        assert status.returncode == 0, status.stderr
        assert status.stdout.startswith("running: pid ")
        pid = int(status.stdout.split()[2].rstrip(","))
        assert is_alive(pid)
    finally:
        stop = tickq("server", "stop")
    assert stop.returncode == 0, stop.stderr
    assert stop.stdout.startswith(f"stopped pid {pid}; it served 1 queue(s)"), stop.stdout
    after = tickq("server", "status")
    assert (after.returncode, after.stdout.split(" (")[0]) == (1, "not running")
    assert tickq("server", "stop").returncode == 1


def test_server_status_prints_the_url_of_the_embedded_queue() -> None:
    # The URL `legacy check --database-url` and `status --database-url` need for the embedded
    # default: printed by `server status`, with no password in it (peer authentication).
    folder = Path(tempfile.mkdtemp(prefix="tickq-server-test-"))
    folder.chmod(0o711)
    env = {**cli_env(), "TICKQ_DATA_DIR": str(folder / "data")}

    def tickq(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "tickq.cli", *args], env=env,
                              capture_output=True, text=True, timeout=120)

    try:
        assert tickq("migrate").returncode == 0  # starts it and makes the queue
        status = tickq("server", "status")
        assert status.returncode == 0, status.stderr
        urls = [line.split(": ", 1)[1] for line in status.stdout.splitlines()
                if line.startswith("database URL: ")]
        assert len(urls) == 1, status.stdout
        url = urls[0]
        # The queue of the folder's registry (./registry.toml): a database of its own.
        assert url.startswith("postgresql://postgres@/tickq_"), url
        assert "password" not in url and "postgres:" not in url, url
        again = tickq("migrate", "--database-url", url)
        assert again.returncode == 0, again.stderr
    finally:
        tickq("server", "stop")
        shutil.rmtree(folder, ignore_errors=True)
