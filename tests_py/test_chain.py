"""Chains through real `tickq tick` processes: steps one after another under one claim, the
stop at a failing step, continue_on_failure, resuming a retry, a timeout in the middle step
killing that step's process tree, and every step recorded in tickq.job_step.
"""

from __future__ import annotations

import select
import signal
import subprocess
import textwrap
from pathlib import Path
from typing import Any

import psycopg
from dispatcher_cli import (
    cli_env,
    run_tickq,
    start_tickq,
    tickq_argv,
    wait_for,
    write_script,
)
from processes import is_alive

# Each step appends "NAME" to steps.log; FAIL_<NAME>=1 in its env makes it fail once (a marker
# file remembers it failed), FAIL_<NAME>=always makes it fail every time.
STEP = """#!/bin/sh
echo "$TICKQ_STEP" >> steps.log
echo "output of $TICKQ_STEP run $TICKQ_RUN_ID"
case "$FAIL" in
  always) exit 7 ;;
  once) marker="failed-$TICKQ_KIND-$TICKQ_STEP"
        [ -e "$marker" ] || { touch "$marker"; exit 5; } ;;
esac
exit 0
"""


def registry(folder: Path, body: str) -> Path:
    path = folder / "registry.toml"
    path.write_text('[settings]\nslots = 1\nretry_base = "1s"\nretry_max = "1s"\n\n'
                    + textwrap.dedent(body))
    return path


def chain_toml(kind: str, steps: list[dict[str, Any]], **extra: str) -> str:
    """A chain's TOML; each step runs ./step.sh unless it gives its own command."""
    lines = [f"[kinds.{kind}]", 'every = "1h"']
    lines += [f"{k} = {v}" for k, v in extra.items()]
    for step in steps:
        lines += ["", f"[[kinds.{kind}.steps]]", f'name = "{step["name"]}"',
                  "command = " + step.get("command", '["./step.sh"]'),
                  f'timeout = "{step.get("timeout", "20s")}"']
        if "fail" in step:
            lines.append(f'env = {{ FAIL = "{step["fail"]}" }}')
        if step.get("continue_on_failure"):
            lines.append("continue_on_failure = true")
    return "\n".join(lines) + "\n\n"


def steps_log(folder: Path) -> list[str]:
    path = folder / "steps.log"
    return path.read_text().split() if path.exists() else []


def job_steps(conn: psycopg.Connection, kind: str) -> list[tuple]:
    return conn.execute(
        "SELECT r.id, s.n, s.name, s.outcome::text, s.exit_code, s.output_tail,"
        " s.finished_at >= s.started_at FROM tickq.job_step AS s"
        " JOIN tickq.job_run AS r ON r.id = s.run_id WHERE r.kind = %s ORDER BY r.id, s.n",
        (kind,),
    ).fetchall()


def chain_runs(conn: psycopg.Connection, kind: str) -> list[tuple]:
    return conn.execute(
        "SELECT run_trigger::text, outcome::text, exit_code FROM tickq.job_run WHERE kind = %s"
        " ORDER BY id", (kind,),
    ).fetchall()


def test_a_chain_stops_at_its_first_failing_step_and_records_each_step(
    tmp_path: Path, db_url: str, conn: psycopg.Connection
) -> None:
    write_script(tmp_path, "step.sh", STEP)
    path = registry(tmp_path, chain_toml("core", [
        {"name": "pull"}, {"name": "ingest", "fail": "always"}, {"name": "push"}]))

    result = run_tickq("tick", path, db_url)

    assert result.returncode == 0, result.stderr
    assert steps_log(tmp_path) == ["pull", "ingest"], "push never started"
    rows = job_steps(conn, "core")
    assert [r[1:5] for r in rows] == [(1, "pull", "ok", 0), (2, "ingest", "failed", 7)]
    assert all(r[6] for r in rows)
    assert rows[0][5] == f"output of pull run {rows[0][0]}\n"
    assert chain_runs(conn, "core") == [("schedule", "failed", 7)]
    tail = conn.execute("SELECT output_tail FROM tickq.job_run WHERE kind = 'core'").fetchone()[0]
    assert "step 2 ingest: failed" in tail and "later steps not started" in tail
    status = run_tickq("status", path, db_url)
    assert "1/3 ok, failed at ingest" in status.stdout, status.stdout


def test_continue_on_failure_goes_on_and_the_chain_ends_ok(
    tmp_path: Path, db_url: str, conn: psycopg.Connection
) -> None:
    write_script(tmp_path, "step.sh", STEP)
    path = registry(tmp_path, chain_toml("core", [
        {"name": "pull"}, {"name": "ingest", "fail": "always", "continue_on_failure": True},
        {"name": "push"}]))

    assert run_tickq("tick", path, db_url).returncode == 0

    assert steps_log(tmp_path) == ["pull", "ingest", "push"]
    assert [r[1:5] for r in job_steps(conn, "core")] == [
        (1, "pull", "ok", 0), (2, "ingest", "failed", 7), (3, "push", "ok", 0)]
    assert chain_runs(conn, "core") == [("schedule", "ok", 0)]


def test_a_retry_resumes_at_the_failed_step_only_when_the_kind_says_resume(
    tmp_path: Path, db_url: str, conn: psycopg.Connection
) -> None:
    write_script(tmp_path, "step.sh", STEP)
    steps = [{"name": "pull"}, {"name": "ingest", "fail": "once"}, {"name": "push"}]
    path = registry(tmp_path, chain_toml("resumes", steps, retries="1", resume="true")
                    + chain_toml("restarts", steps, retries="1"))

    assert run_tickq("tick", path, db_url).returncode == 0
    # A retry the first tick did not stay for, a backoff away: due now, not waited for.
    conn.execute("UPDATE tickq.job_kind SET due_at = now() WHERE next_trigger = 'retry'")
    assert run_tickq("tick", path, db_url).returncode == 0

    assert chain_runs(conn, "resumes") == [("schedule", "failed", 5), ("retry", "ok", 0)]
    assert chain_runs(conn, "restarts") == [("schedule", "failed", 5), ("retry", "ok", 0)]
    resumed = [r[1:4] for r in job_steps(conn, "resumes")]
    assert resumed == [(1, "pull", "ok"), (2, "ingest", "failed"),
                       (2, "ingest", "ok"), (3, "push", "ok")]
    restarted = [r[1:4] for r in job_steps(conn, "restarts")]
    assert restarted == [(1, "pull", "ok"), (2, "ingest", "failed"),
                         (1, "pull", "ok"), (2, "ingest", "ok"), (3, "push", "ok")]
    status = run_tickq("status", path, db_url).stdout
    assert "2/3 ok from step 2 (resumed)" in status, status


def test_a_timeout_in_the_middle_step_kills_its_process_tree_and_stops_the_chain(
    tmp_path: Path, db_url: str, conn: psycopg.Connection
) -> None:
    write_script(tmp_path, "step.sh", STEP)
    # The middle step leaves a grandchild behind and hangs; its own timeout is 1 second.
    write_script(tmp_path, "hang.sh", """#!/bin/sh
echo "$TICKQ_STEP" >> steps.log
sleep 300 &
echo $! > grandchild.pid
echo $$ > child.pid
sleep 300
""")
    path = registry(tmp_path, chain_toml("core", [
        {"name": "pull"}, {"name": "stuck", "command": '["./hang.sh"]', "timeout": "1s"},
        {"name": "push"}]))

    # Were the step's timeout or its tree's kill missing, the tick would wait for the sleeps
    # (300 s) and run_tickq's own 60 s would fail the test.
    result = run_tickq("tick", path, db_url)

    assert result.returncode == 0, result.stderr
    assert steps_log(tmp_path) == ["pull", "stuck"], "push never started"
    for name in ("child.pid", "grandchild.pid"):
        pid = int((tmp_path / name).read_text())
        wait_for(f"{name} gone", lambda pid=pid: not is_alive(pid), 5)
    assert [r[1:4] for r in job_steps(conn, "core")] == [(1, "pull", "ok"), (2, "stuck", "timeout")]
    assert chain_runs(conn, "core")[0][:2] == ("schedule", "timeout")


def test_check_counts_a_chain_as_one_kind_for_its_total_timeout(
    tmp_path: Path, db_url: str
) -> None:
    path = registry(tmp_path, chain_toml("core", [
        {"name": "pull", "timeout": "25m"}, {"name": "push", "timeout": "5m"}]))

    result = run_tickq("check", path, db_url)

    line = next(x for x in result.stdout.splitlines() if x.startswith("core "))
    assert "30m" in line.split(), line
    shares = result.stdout.split("worst case")[0]  # the slot-share table, before the simulation
    assert shares.count("\ncore ") == 1


def test_a_stop_signal_in_a_step_interrupts_the_chain_and_starts_no_later_step(
    tmp_path: Path, db_url: str, conn: psycopg.Connection
) -> None:
    write_script(tmp_path, "step.sh", STEP)
    write_script(tmp_path, "hang.sh", "#!/bin/sh\necho $$ > child.pid\nexec sleep 300\n")
    path = registry(tmp_path, chain_toml("core", [
        {"name": "pull"}, {"name": "stuck", "command": '["./hang.sh"]'}, {"name": "push"}]))
    tick = start_tickq("tick", path, db_url)
    try:
        pid = int(wait_for("child.pid", lambda: (tmp_path / "child.pid").exists()
                           and (tmp_path / "child.pid").read_text().strip()))
        tick.send_signal(signal.SIGTERM)
        tick.communicate(timeout=20)
    finally:
        if tick.poll() is None:
            tick.kill()
            tick.communicate()

    assert tick.returncode == 128 + signal.SIGTERM
    assert not is_alive(pid)
    assert steps_log(tmp_path) == ["pull"], "push never started"
    assert [r[1:4] for r in job_steps(conn, "core")] == [
        (1, "pull", "ok"), (2, "stuck", "interrupted")]
    assert chain_runs(conn, "core")[0][:2] == ("schedule", "interrupted")


def test_run_of_a_chain_streams_each_steps_output_as_it_comes(
    tmp_path: Path, db_url: str, conn: psycopg.Connection
) -> None:
    """`tickq run CHAIN` shows its steps' output on stdout as a plain kind's `tickq run` does:
    in order, while the chain still runs (the second step waits for a file the test creates
    only after it has read the step's first line)."""
    path = registry(tmp_path, chain_toml("pipeline", [
        {"name": "fetch", "command": '["sh", "-c", "echo fetched one; echo fetched two"]'},
        {"name": "load", "command": '["sh", "-c", "echo loading; while [ ! -e go ]; '
                                    'do sleep 0.05; done; echo loaded"]'},
        {"name": "report", "command": '["sh", "-c", "echo reported"]'},
    ], timeout='"60s"'))
    run = subprocess.Popen(tickq_argv("run", path, db_url, "pipeline"), env=cli_env(),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert run.stdout is not None
        seen = []
        while "loading\n" not in seen:
            readable, _, _ = select.select([run.stdout], [], [], 20)
            assert readable, f"no output while the chain runs (seen {seen})"
            line = run.stdout.readline()
            assert line, f"stdout closed before the second step printed (seen {seen})"
            seen.append(line)
        assert run.poll() is None, "the chain is still waiting in its second step"
        assert seen == ["fetched one\n", "fetched two\n", "loading\n"]
        (tmp_path / "go").touch()
        rest, err = run.communicate(timeout=30)
    finally:
        if run.poll() is None:
            run.kill()
    assert rest == "loaded\nreported\n"
    assert run.returncode == 0, err
    assert "of pipeline: ok" in err.splitlines()[-1]
    [(tail,)] = conn.execute(
        "SELECT output_tail FROM tickq.job_run WHERE kind = 'pipeline'").fetchall()
    assert "fetched one" in tail and "reported" in tail, "the tail is kept as well"
