"""The health check and what the operator reads: `status --check` and its problems, `status`
and `check` fitting a terminal, commands that cannot start, and the log's levels."""

from __future__ import annotations

import os
import select
import signal
import subprocess
from pathlib import Path

import psycopg
from dispatcher_cli import (
    cli_env,
    run_tickq,
    tickq_argv,
    write_registry,
)

# ---------------------------------------------------------------- status --check


def test_status_check_exits_1_with_one_line_per_problem(
    tmp_path: Path, db_url: str, conn: psycopg.Connection, own_ledger_folder: Path
) -> None:
    registry = write_registry(tmp_path, {
        "fine": {"command": ["true"], "every": "1h", "timeout": "30s"},
        "broken": {"command": ["false"], "every": "1h", "timeout": "30s"},
        "late": {"command": ["true"], "every": "1h", "timeout": "30s"},
        "hung": {"command": ["true"], "every": "1h", "timeout": "30s"},
    }, {"alert_after": 1})
    never_ticked = run_tickq("status", registry, db_url, "--check")
    assert never_ticked.returncode == 1
    assert "PROBLEM no_tick: no tick has ended yet" in never_ticked.stdout

    assert run_tickq("tick", registry, db_url).returncode == 0
    failing = run_tickq("status", registry, db_url, "--check")
    assert failing.returncode == 1, "broken failed once, alert_after = 1"
    assert failing.stdout.splitlines() == [
        "PROBLEM failing: broken: failed 1 time(s) in a row (alert_after 1), last outcome failed"]

    conn.execute("UPDATE tickq.job_kind SET failure_streak = 0 WHERE name = 'broken'")
    ok = run_tickq("status", registry, db_url, "--check")
    assert (ok.returncode, ok.stdout.split(":")[0]) == (0, "ok"), ok.stdout

    conn.execute("UPDATE tickq.job_kind SET due_at = now() - interval '1 hour' WHERE name = 'late'")
    conn.execute(
        "SELECT * FROM tickq.claim_manual('hung', 'elsewhere:1', NULL, now() - interval '2 hours')")
    conn.execute("UPDATE tickq.dispatcher_tick SET last_tick_at = now() - interval '11 minutes'")
    own_ledger_folder.mkdir(mode=0o700, exist_ok=True)
    own_ledger_folder.chmod(0o775)

    result = run_tickq("status", registry, db_url, "--check")

    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert [ln.split(":")[0] for ln in lines] == [
        "PROBLEM stale", "PROBLEM stuck", "PROBLEM no_tick", "PROBLEM ledger"], lines
    assert lines[0].startswith("PROBLEM stale: late: due since ")
    assert "unclaimed for 1h" in lines[0]
    assert "leased by elsewhere:1" in lines[1] and "without a report" in lines[1]
    assert "the last tick ended 11m" in lines[2] and "more than two ticks (5m)" in lines[2]
    assert "may be written by others" in lines[3]


# ---------------------------------------------------------------- status formatting


def test_status_fits_80_columns_with_relative_times_and_wide_shows_everything(
    tmp_path: Path, db_url: str, conn: psycopg.Connection
) -> None:
    long = "a_kind_whose_name_is_far_longer_than_anyone_would_like_to_type"
    registry = write_registry(tmp_path, {
        long: {"command": ["true"], "at": ["06:00", "09:30", "12:00", "15:30", "18:00"],
               "on": ["mon", "tue", "wed", "thu", "fri"], "timezone": "Europe/London",
               "timeout": "30s"},
        "every_five": {"command": ["true"], "every": "5m", "timeout": "30s"},
    }, {"timezone": "Europe/London"})
    assert run_tickq("tick", registry, db_url).returncode == 0
    # Next due in a few minutes whenever the tick fell (a tick just before a 5-minute boundary
    # would leave it due "now").
    conn.execute("UPDATE tickq.job_kind SET due_at = now() + interval '4 minutes'"
                 " WHERE name = 'every_five'")
    conn.commit()

    # A terminal of 80 columns (COLUMNS as a shell exports it; through a pipe without it the
    # table keeps whole names, for grep).
    narrow = subprocess.run(tickq_argv("status", registry, db_url),
                            env={**cli_env(), "COLUMNS": "80"}, capture_output=True, text=True,
                            timeout=60)

    assert narrow.returncode == 0, narrow.stderr
    lines = narrow.stdout.splitlines()
    assert max(len(ln) for ln in lines) <= 80, narrow.stdout
    assert "times in Europe/London, now " in narrow.stdout
    [row] = [ln for ln in lines if ln.startswith("every_five")]
    assert " in " in row and row.rstrip().endswith((" ago", " now")), row  # next in, last ago
    # The name is cut to what is left beside the other columns, which are wider after the day's
    # last slot ("Dec 08 06:00 in 11h"): as little as 8 characters, "a_kind_…".
    assert any(ln.startswith(long[:7]) and "…" in ln.split()[0] for ln in lines), narrow.stdout

    wide = run_tickq("status", registry, db_url, "--wide")
    assert long in wide.stdout
    assert "paused until" in wide.stdout.splitlines()[1]


def test_status_watch_redraws_and_ends_cleanly_on_ctrl_c(tmp_path: Path, db_url: str) -> None:
    registry = write_registry(tmp_path, {"a": {
        "command": ["true"], "every": "1h", "timeout": "30s"}})
    assert run_tickq("sync", registry, db_url).returncode == 0
    watch = subprocess.Popen(tickq_argv("status", registry, db_url, "--watch", "0.5"),
                             env=cli_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    seen = b""
    try:
        while seen.count(b"\x1b[H\x1b[2J") < 2:  # redrawn in place, twice: then ^C
            readable, _, _ = select.select([watch.stdout], [], [], 60)
            assert readable, f"no redraw: {seen!r}"
            chunk = os.read(watch.stdout.fileno(), 65536)
            assert chunk, f"ended before its second redraw: {seen!r}"
            seen += chunk
        watch.send_signal(signal.SIGINT)
        _rest, err = watch.communicate(timeout=20)
    finally:
        if watch.poll() is None:
            watch.kill()

    assert watch.returncode == 0, err
    assert err == b""


def test_check_fits_100_columns(tmp_path: Path, db_url: str) -> None:
    long = "a_kind_whose_name_is_far_longer_than_anyone_would_like_to_type_or_read"
    registry = write_registry(tmp_path, {
        long: {"command": ["true"], "at": ["06:00", "09:30", "12:00", "15:30", "18:00"],
               "on": ["mon", "tue", "wed", "thu", "fri"],
               "timezone": "America/Argentina/Buenos_Aires", "timeout": "30s"},
    })

    result = run_tickq("check", registry, db_url)

    assert result.returncode == 0, result.stderr
    assert max(len(ln) for ln in result.stdout.splitlines()) <= 100, result.stdout
    assert "a_kind_whose_name" in result.stdout


# ---------------------------------------------------------------- commands that cannot start


def test_check_and_sync_report_commands_that_cannot_start_as_the_dispatcher_resolves_them(
    tmp_path: Path, db_url: str, conn: psycopg.Connection
) -> None:
    (tmp_path / "bin").mkdir()
    (tmp_path / "jobs").mkdir()
    ok = tmp_path / "bin" / "ingest"
    ok.write_text("#!/bin/sh\npwd > ../ran-in\n")
    ok.chmod(0o755)
    (tmp_path / "bin" / "noexec").write_text("#!/bin/sh\n")
    (tmp_path / "empty").mkdir()
    registry = write_registry(tmp_path, {
        # The README's example: the program is relative to the registry, cwd is where it runs.
        "ingest": {"command": ["bin/ingest", "--weekly"], "cwd": "jobs", "every": "1h",
                   "timeout": "30s"},
        "missing": {"command": ["bin/nope"], "every": "1h", "timeout": "30s"},
        "noexec": {"command": ["./bin/noexec"], "every": "1h", "timeout": "30s"},
        "nopath": {"command": ["tickq-no-such-tool"], "every": "1h", "timeout": "30s"},
    })
    registry.write_text(registry.read_text() + f'env = {{ PATH = "{tmp_path / "empty"}" }}\n')

    check = run_tickq("check", registry, db_url)

    assert check.returncode == 1, check.stdout
    assert "capacity fits" in check.stdout
    lines = [ln for ln in check.stderr.splitlines() if "cannot start" in ln]
    assert [ln.split("'")[1] for ln in lines] == ["missing", "noexec", "nopath"], lines
    assert "no such file" in lines[0] and "no execute bit" in lines[1]
    assert "not found in PATH" in lines[2]

    sync = run_tickq("sync", registry, db_url)
    assert sync.returncode == 0
    assert sum("command.cannot_start" in ln for ln in sync.stdout.splitlines()) == 3

    assert run_tickq("tick", registry, db_url).returncode == 0
    assert (tmp_path / "ran-in").read_text().strip() == str((tmp_path / "jobs").resolve())
    assert conn.execute("SELECT outcome::text FROM tickq.job_run WHERE kind = 'ingest'"
                        ).fetchall() == [("ok",)]


# ---------------------------------------------------------------- log noise


def test_a_registry_edit_is_info_real_drift_a_warning_in_registry_units(
    tmp_path: Path, db_url: str, conn: psycopg.Connection
) -> None:
    kind = {"command": ["true"], "every": "5m", "timeout": "30s"}
    registry = write_registry(tmp_path, {"k": kind})
    first = run_tickq("sync", registry, db_url)
    assert first.returncode == 0, first.stderr

    write_registry(tmp_path, {"k": {**kind, "every": "10m"}})
    edited = run_tickq("sync", registry, db_url)
    [line] = [ln for ln in edited.stdout.splitlines() if "registry.drift" in ln]
    assert line.split()[1] == "INFO", line
    assert "field=every stored=5m registry=10m" in line

    conn.execute("UPDATE tickq.job_kind SET timeout = '2 minutes' WHERE name = 'k'")
    drifted = run_tickq("sync", registry, db_url)
    [line] = [ln for ln in drifted.stdout.splitlines() if "registry.drift" in ln]
    assert line.split()[1] == "WARNING", line
    assert "field=timeout stored=2m registry=30s" in line


def test_a_fresh_database_logs_one_migrated_line(tmp_path: Path, empty_db_url: str) -> None:
    registry = write_registry(tmp_path, {"k": {
        "command": ["true"], "every": "1h", "timeout": "30s"}})

    result = run_tickq("sync", registry, empty_db_url)

    assert result.returncode == 0, result.stderr
    [line] = [ln for ln in result.stdout.splitlines() if "db.migrated" in ln]
    migrations = len(list((Path(__file__).parent.parent / "sql" / "migrations").glob("*.sql")))
    assert f"migrations={migrations} api=true" in line
