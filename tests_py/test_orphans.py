"""The ledger of running commands: a dead dispatcher's commands are stopped, nothing else is."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from processes import is_alive

from tickq.host.ledger import Ledger, start_time
from tickq.host.process import Command, Watch, run_command


@pytest.fixture
def groups() -> Iterator[list[subprocess.Popen[bytes]]]:
    """Process groups a test starts; killed at teardown whatever happened."""
    started: list[subprocess.Popen[bytes]] = []
    yield started
    for proc in started:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def wait_for(what: str, ready: Callable[[], bool], seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while not ready():
        assert time.monotonic() < deadline, what
        time.sleep(0.01)


def start_group(groups: list, script: str, setup: str = ":") -> subprocess.Popen[bytes]:
    """`sh -c SETUP; SCRIPT` in a process group of its own, returned once SETUP has run (its
    traps are set): the shell says so on its stdout, then points it elsewhere and goes on."""
    proc = subprocess.Popen(["sh", "-c", f"{setup}; echo ready; exec >/dev/null; {script}"],
                            start_new_session=True, stdout=subprocess.PIPE)
    groups.append(proc)
    with proc.stdout:
        assert proc.stdout.readline() == b"ready\n", "the shell ended before it was ready"
    return proc


def dead_dispatcher() -> tuple[int, str]:
    """The pid and start time of a process that has ended."""
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(5)"])
    started = start_time(proc.pid)
    assert started is not None
    proc.kill()
    proc.wait()
    return proc.pid, started


def write_entry(folder: Path, pgid: int, **overrides: object) -> Path:
    pid, started = dead_dispatcher()
    entry = {
        "pgid": pgid, "leader_started": start_time(pgid), "host": Ledger(folder).host,
        "dispatcher_pid": pid, "dispatcher_started": started, "kind": "k", "run_id": 7,
        **overrides,
    }
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    path = folder / f"{pgid}.json"
    path.write_text(json.dumps(entry))
    return path


def test_a_group_whose_dispatcher_died_is_stopped_and_forgotten(
    tmp_path: Path, groups: list
) -> None:
    proc = start_group(groups, "exec sleep 30")
    path = write_entry(tmp_path, proc.pid)

    [stopped] = Ledger(tmp_path).reap(grace=2.0)

    assert (stopped.pgid, stopped.signal, stopped.entry["run_id"]) == (proc.pid, "SIGTERM", 7)
    assert proc.wait(timeout=5) == -signal.SIGTERM
    assert not path.exists()


def test_a_group_that_ignores_sigterm_gets_sigkill_after_the_grace(
    tmp_path: Path, groups: list
) -> None:
    """SIGTERM first; the group outlives it (its shell notes it and goes on); SIGKILL then."""
    noted = tmp_path / "noted"
    proc = start_group(groups, f"while :; do sleep 0.01; echo alive >> {noted}; done",
                       setup=f"trap 'echo TERM >> {noted}' TERM")
    write_entry(tmp_path, proc.pid)

    [stopped] = Ledger(tmp_path).reap(grace=1.0)

    assert stopped.signal == "SIGKILL"
    assert proc.wait(timeout=5) == -signal.SIGKILL
    # The grace: the group went on past SIGTERM, one line per round of its loop, until SIGKILL.
    after = noted.read_text().split("TERM\n", 1)
    assert len(after) == 2 and after[1].count("alive\n") >= 20, noted.read_text()[-200:]


def test_a_reused_pid_is_never_signalled(tmp_path: Path, groups: list) -> None:
    proc = start_group(groups, "exec sleep 30")
    path = write_entry(tmp_path, proc.pid, leader_started="another process's start time")

    assert Ledger(tmp_path).reap(grace=1.0) == []

    assert is_alive(proc.pid)
    assert not path.exists()


def test_another_hosts_entries_are_left_alone(tmp_path: Path, groups: list) -> None:
    proc = start_group(groups, "exec sleep 30")
    path = write_entry(tmp_path, proc.pid, host="some-other-host")

    assert Ledger(tmp_path).reap(grace=1.0) == []

    assert is_alive(proc.pid)
    assert path.exists()


def test_a_live_dispatchers_command_is_left_alone_and_forgotten_when_it_ends(
    tmp_path: Path,
) -> None:
    ledger = Ledger(tmp_path)
    results = []
    go = tmp_path / "go"
    runner = threading.Thread(target=lambda: results.append(run_command(
        Command(["sh", "-c", f"while [ ! -e {go} ]; do sleep 0.02; done; echo done"]),
        Watch(30, ledger=ledger, labels={"kind": "k", "run_id": 1}))))
    runner.start()
    wait_for("the command's entry", lambda: bool(list(tmp_path.glob("*.json"))))
    [path] = tmp_path.glob("*.json")
    entry = json.loads(path.read_text())
    assert (entry["kind"], entry["run_id"], entry["dispatcher_pid"]) == ("k", 1, os.getpid())

    assert Ledger(tmp_path).reap(grace=1.0) == [], "its dispatcher (this process) is alive"

    go.touch()
    runner.join(30)
    assert results[0].outcome == "ok" and results[0].output_tail == "done\n"
    assert list(tmp_path.glob("*.json")) == []


def test_a_ledger_that_cannot_be_written_does_not_stop_the_run(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")

    result = run_command(Command(["echo", "hi"]), Watch(10, ledger=Ledger(blocker / "ledger")))

    assert result.outcome == "ok"
    assert result.output_tail.startswith("hi\n[tickq: cannot record the command in ")
    assert "it would outlive a killed dispatcher" in result.output_tail


def test_a_folder_others_can_write_to_is_never_acted_on(tmp_path: Path, groups: list) -> None:
    proc = start_group(groups, "exec sleep 30")
    path = write_entry(tmp_path / "ledger", proc.pid)
    (tmp_path / "ledger").chmod(0o777)

    assert Ledger(tmp_path / "ledger").reap(grace=1.0) == []
    assert is_alive(proc.pid)
    assert path.exists()

    result = run_command(Command(["echo", "hi"]), Watch(10, ledger=Ledger(tmp_path / "ledger")))
    assert result.outcome == "ok"
    assert "is not this user's alone" in result.output_tail


def test_a_dead_dispatchers_escaped_process_is_stopped_by_its_token(
    tmp_path: Path, groups: list
) -> None:
    """A process that left its run's group (setsid) is found by the token in its environment."""
    pidfile = tmp_path / "escapee"
    env = {**os.environ, "TICKQ_RUN_TOKEN": "feedc0de"}
    proc = subprocess.Popen(
        ["sh", "-c", f"setsid sh -c 'echo $$ > {pidfile}; exec sleep 30' & sleep 30"],
        start_new_session=True, env=env,
    )
    groups.append(proc)
    wait_for("the escapee's pid", lambda: pidfile.exists() and pidfile.read_text().endswith("\n"))
    escapee = int(pidfile.read_text())
    write_entry(tmp_path, proc.pid, token="feedc0de")
    try:
        [stopped] = Ledger(tmp_path).reap(grace=2.0)
        assert stopped.pgid == proc.pid
        wait_for("the escapee stopped", lambda: not is_alive(escapee))
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(escapee, signal.SIGKILL)
