"""A dispatcher killed mid-run: the next `run` or `tick` on its host releases its lease; and
a ledger folder others may write, or that belongs to another user."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import psycopg
from dispatcher_cli import (
    run_tickq,
    runs,
    start_tickq,
    wait_for,
    write_registry,
)
from processes import is_alive

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
