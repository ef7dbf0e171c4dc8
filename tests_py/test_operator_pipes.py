"""`tickq` writing into a pipe whose reader went away (`| head -1`, `| true`), and a garbage
database URL: one line, the right exit status, no traceback."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import psycopg
from dispatcher_cli import (
    cli_env,
    run_tickq,
    runs,
    tickq_argv,
    write_registry,
)

# ---------------------------------------------------------------- a closed stdout


def test_a_reader_that_closes_the_pipe_early_does_not_kill_the_tick(
    tmp_path: Path, db_url: str, conn: psycopg.Connection
) -> None:
    """`tickq tick | head -1`: the log's reader goes away after the first line; the tick must
    still run and report everything it claimed, exit 0, and print no traceback."""
    registry = write_registry(tmp_path, {
        # each goes on until the pipe is closed: the tick's later lines meet a closed pipe
        k: {"command": ["sh", "-c", "while [ ! -e go ]; do sleep 0.02; done; echo done"],
            "every": "1h", "timeout": "30s"}
        for k in ("a", "b", "c")
    }, {"slots": 1})
    errors = tmp_path / "stderr.txt"
    with errors.open("w") as err:
        tick = subprocess.Popen(tickq_argv("tick", registry, db_url), env=cli_env(),
                                stdout=subprocess.PIPE, stderr=err, text=True)
        assert tick.stdout is not None
        first = tick.stdout.readline()
        tick.stdout.close()  # like `head -1`
        (tmp_path / "go").touch()
        rc = tick.wait(timeout=60)

    assert "run.claimed" in first
    assert rc == 0, errors.read_text()
    assert errors.read_text() == ""
    assert sorted((r["kind"], r["outcome"]) for r in runs(conn)) == [
        ("a", "ok"), ("b", "ok"), ("c", "ok")]


# ---------------------------------------------------------------- one line, no traceback


def _closed_reader(argv: list[str]) -> tuple[int, str]:
    """Run `argv` with a stdout whose reader is already gone (`... | true`)."""
    read, write = os.pipe()
    os.close(read)
    try:
        done = subprocess.run(argv, env=cli_env(), stdout=write, stderr=subprocess.PIPE,
                              text=True, timeout=60)
    finally:
        os.close(write)
    return done.returncode, done.stderr


def test_status_and_systemd_print_into_a_closed_pipe_end_quietly(
    tmp_path: Path, db_url: str
) -> None:
    registry = write_registry(tmp_path, {"a": {
        "command": ["true"], "every": "1h", "timeout": "30s"}})
    assert run_tickq("sync", registry, db_url).returncode == 0

    for argv in (tickq_argv("status", registry, db_url),
                 tickq_argv("systemd", registry, db_url, "print")):
        rc, err = _closed_reader(argv)
        assert rc == 128 + signal.SIGPIPE, (argv, err)
        assert err == "", (argv, err)


def test_a_garbage_database_url_is_invalid_configuration(tmp_path: Path) -> None:
    registry = write_registry(tmp_path, {"a": {
        "command": ["true"], "every": "1h", "timeout": "30s"}})

    result = run_tickq("status", registry, "garbage")

    assert result.returncode == 2
    assert result.stderr.startswith("tickq: invalid --database-url")
    assert "Traceback" not in result.stderr and len(result.stderr.splitlines()) == 1


def test_run_into_a_closed_pipe_keeps_the_runs_exit_status(
    tmp_path: Path, db_url: str, conn: psycopg.Connection
) -> None:
    registry = write_registry(tmp_path, {"chatty": {
        "command": ["seq", "1", "200000"], "every": "1h", "timeout": "30s"}})

    rc, err = _closed_reader(tickq_argv("run", registry, db_url, "chatty"))

    assert rc == 0, err
    assert "Traceback" not in err and "Exception ignored" not in err, err
    assert ": ok, exit 0," in err.splitlines()[-1]
    assert conn.execute("SELECT outcome::text FROM tickq.job_run").fetchall() == [("ok",)]
