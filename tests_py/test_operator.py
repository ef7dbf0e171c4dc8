"""An operator's everyday with real `tickq` processes: a reader that closes the pipe early, a
dispatcher killed mid-run, manual runs, pauses and the health check."""

from __future__ import annotations

import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import psycopg
from dispatcher_cli import (
    cli_env,
    run_tickq,
    runs,
    start_tickq,
    tickq_argv,
    wait_for,
    write_registry,
)
from processes import is_alive

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


# ---------------------------------------------------------------- a dispatcher that died


def test_a_manual_run_right_after_the_dispatcher_was_killed_releases_its_lease(
    tmp_path: Path, db_url: str, conn: psycopg.Connection, own_ledger_folder: Path
) -> None:
    """The lease of a SIGKILLed dispatcher is released as `lost` by the next `run` on its host,
    which then runs the kind instead of refusing it until the lease expires (31 minutes)."""
    registry = write_registry(tmp_path, {"long": {
        "command": ["sh", "-c", "if [ -e started ]; then echo second; exit 0; fi; "
                    "echo $$ > started; exec sleep 30"],
        "every": "1h", "timeout": "30m",
    }})
    tick = start_tickq("tick", registry, db_url)
    try:
        pid = int(wait_for("the command", lambda: (tmp_path / "started").exists()
                           and (tmp_path / "started").read_text().strip()))
        wait_for("the ledger entry", lambda: list(own_ledger_folder.glob("*.json")))
        tick.kill()
        tick.communicate(timeout=10)
        [first] = runs(conn)
        assert first["outcome"] == "running"

        result = run_tickq("run", registry, db_url, "long")

        assert result.returncode == 0, result.stderr
        assert "second" in result.stdout
        assert not is_alive(pid)
        first, second = runs(conn)
        assert first["outcome"] == "lost"
        assert f"dispatcher {first['dispatcher']} died before reporting" in first["output_tail"]
        assert (second["run_trigger"], second["outcome"]) == ("manual", "ok")
    finally:
        if tick.poll() is None:
            tick.kill()


def test_a_run_whose_command_ended_after_its_dispatcher_died_is_released_too(
    tmp_path: Path, db_url: str, conn: psycopg.Connection, own_ledger_folder: Path
) -> None:
    registry = write_registry(tmp_path, {"short": {
        "command": ["sh", "-c", "echo $$ > cmd.pid; while [ ! -e go ]; do sleep 0.02; done"],
        "every": "1h", "timeout": "30m",
    }})
    tick = start_tickq("tick", registry, db_url)
    wait_for("the ledger entry", lambda: list(own_ledger_folder.glob("*.json")))
    pid = int(wait_for("cmd.pid", lambda: (tmp_path / "cmd.pid").exists()
                       and (tmp_path / "cmd.pid").read_text().strip()))
    tick.send_signal(signal.SIGKILL)
    tick.communicate(timeout=10)
    (tmp_path / "go").touch()  # the command ends on its own, unwatched
    wait_for("the command's end", lambda: not is_alive(pid))

    result = run_tickq("tick", registry, db_url)

    assert result.returncode == 0, result.stderr
    [row] = runs(conn)
    assert row["outcome"] == "lost"
    assert "run.lost_released" in result.stdout
    assert conn.execute("SELECT run_id FROM tickq.job_kind WHERE name = 'short'").fetchone() == (
        None,)


def test_a_ledger_folder_of_another_user_is_an_error_in_the_log(
    tmp_path: Path, db_url: str, own_ledger_folder: Path
) -> None:
    registry = write_registry(tmp_path, {"a": {
        "command": ["true"], "every": "1h", "timeout": "30s"}})
    own_ledger_folder.mkdir(mode=0o700)
    own_ledger_folder.chmod(0o777)  # shared: anyone could plant entries

    result = run_tickq("tick", registry, db_url)

    assert result.returncode == 0, result.stderr
    [line] = [x for x in result.stdout.splitlines() if "ledger.unusable" in x]
    assert line.split()[1] == "ERROR" and "may be written by others" in line
    assert os.stat(own_ledger_folder).st_mode & 0o777 == 0o777, "tickq changes no one's folder"


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
    assert any(ln.startswith("a_kind_whose_name") and "…" in ln for ln in lines)

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


# ---------------------------------------------------------------- timers without a bus


def test_systemd_install_without_a_user_bus_says_what_to_do_and_writes_nothing(
    tmp_path: Path,
) -> None:
    registry = write_registry(tmp_path, {"a": {
        "command": ["true"], "every": "1h", "timeout": "30s"}})
    home = tmp_path / "home"
    home.mkdir()
    # No user manager can be reached at these addresses, whatever runs on this machine.
    env = {**cli_env(), "HOME": str(home), "XDG_RUNTIME_DIR": str(tmp_path / "no-runtime"),
           "DBUS_SESSION_BUS_ADDRESS": f"unix:path={tmp_path / 'no-bus'}"}

    def tickq_systemd(action: str) -> subprocess.CompletedProcess[str]:
        argv = [sys.executable, "-m", "tickq.cli", "systemd", action, "--name", "t",
                "--registry", str(registry)]
        return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60)

    done = tickq_systemd("install")

    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("tickq: no systemd user manager to talk to")
    assert "tickq cron print" in done.stderr
    assert ("--system" if os.geteuid() == 0 else "loginctl enable-linger") in done.stderr
    assert list(home.rglob("*")) == [], "nothing written"

    # Files left by an earlier install are removed even though systemd cannot be told.
    units = home / ".config" / "systemd" / "user"
    units.mkdir(parents=True)
    for suffix in ("service", "timer"):
        (units / f"tickq-t.{suffix}").write_text("")
    removed = tickq_systemd("uninstall")
    assert (removed.returncode, removed.stdout) == (0, "removed\n"), removed.stderr
    assert list(units.iterdir()) == []


def test_version_and_launchd_advice_on_linux_name_commands(tmp_path: Path) -> None:
    version = subprocess.run([sys.executable, "-m", "tickq.cli", "--version"], env=cli_env(),
                             capture_output=True, text=True, timeout=30)
    assert version.returncode == 0 and version.stdout.startswith("tickq 0."), version
    if sys.platform.startswith("linux"):
        registry = write_registry(tmp_path, {"a": {
            "command": ["true"], "every": "1h", "timeout": "30s"}})
        done = subprocess.run([sys.executable, "-m", "tickq.cli", "launchd", "install",
                               "--registry", str(registry)], env=cli_env(),
                              capture_output=True, text=True, timeout=30)
        assert done.returncode == 2
        assert "`tickq systemd install`" in done.stderr and "`tickq cron print`" in done.stderr
        assert "_install" not in done.stderr and "crontab_line" not in done.stderr


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


# ---------------------------------------------------------------- shell completion


def test_bash_completion_offers_commands_options_actions_and_kind_names(tmp_path: Path) -> None:
    registry = write_registry(tmp_path, {
        name: {"command": ["true"], "every": "1h", "timeout": "30s"}
        for name in ("send_email", "sweep")
    })
    script = subprocess.run([sys.executable, "-m", "tickq.cli", "completion", "bash"],
                            env=cli_env(), capture_output=True, text=True, timeout=30)
    assert script.returncode == 0, script.stderr
    (tmp_path / "completion.bash").write_text(script.stdout)
    probe = (
        "source completion.bash\n"
        'for line in "tickq sta" "tickq status --w" "tickq systemd in" "tickq run s" '
        f'"tickq pause --registry {registry} se"; do\n'
        '  COMP_WORDS=($line); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _tickq\n'
        '  echo "${COMPREPLY[*]}"\n'
        "done\n"
    )
    done = subprocess.run(["bash", "-c", probe], cwd=tmp_path, env=cli_env(),
                          capture_output=True, text=True, timeout=60)

    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "status", "--wide --watch", "install", "send_email sweep", "send_email"]
    zsh = subprocess.run([sys.executable, "-m", "tickq.cli", "completion", "zsh"],
                         env=cli_env(), capture_output=True, text=True, timeout=30)
    assert "bashcompinit" in zsh.stdout and "complete -o default -F _tickq tickq" in zsh.stdout


def test_a_ledger_folder_owned_by_another_user_is_a_problem(tmp_path: Path) -> None:
    from tickq.host.ledger import Ledger

    if os.geteuid() == 0:
        folder = tmp_path / "ledger"
        folder.mkdir(mode=0o700)
        os.chown(folder, 65534, -1)  # nobody's
    else:
        folder = Path("/")  # root's, and so another user's

    problem = Ledger(folder).problem()

    assert problem is not None and "belongs to uid" in problem and "TICKQ_RUN_DIR" in problem
    assert Ledger(tmp_path / "not-yet").problem() is None, "a folder not made yet is fine"


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
