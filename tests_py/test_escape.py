"""No process a command starts outlives its run, however it leaves the process group:
setsid, setpgid, a double fork, or setsid and a double fork together. Real processes, real
signals; each escapee writes its pid to a file before it hides."""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

import pytest
from processes import is_alive

from tickq.host.process import Command, Watch, run_command

PY = sys.executable

# Each program starts one escapee that writes its pid to the file given as argv[1], then waits.
ESCAPES = {
    "setsid": ["sh", "-c", 'setsid sh -c \'echo $$ > "$0"; exec sleep 100\' "$1" & wait', "-"],
    "setpgid": [
        PY, "-c",
        "import os, sys, time\n"
        "if os.fork() == 0:\n"
        "    os.setpgid(0, 0)\n"
        "    open(sys.argv[1], 'w').write(str(os.getpid()))\n"
        "    time.sleep(100)\n"
        "    os._exit(0)\n"
        "time.sleep(100)\n",
    ],
    "double_fork": [
        PY, "-c",
        "import os, sys, time\n"
        "if os.fork() == 0:\n"
        "    if os.fork() == 0:\n"
        "        os.setpgid(0, 0)\n"
        "        open(sys.argv[1], 'w').write(str(os.getpid()))\n"
        "        time.sleep(100)\n"
        "    os._exit(0)\n"
        "time.sleep(100)\n",
    ],
    "setsid_double_fork": [
        "sh", "-c",
        'setsid sh -c \'sh -c "echo \\$\\$ > $0; exec sleep 100" "$0" & \' "$1"; sleep 100', "-",
    ],
}  # fmt: skip


def _wait_pid(path: Path, seconds: float = 5.0) -> int:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if path.exists() and path.read_text().strip():
            return int(path.read_text().strip())
        time.sleep(0.02)
    raise AssertionError(f"{path} never written")


def _pgid(pid: int) -> int | None:
    try:
        return os.getpgid(pid)
    except ProcessLookupError:
        return None


@pytest.mark.parametrize("how", sorted(ESCAPES))
def test_an_escaped_descendant_is_gone_after_the_timeout(tmp_path: Path, how: str) -> None:
    pidfile = tmp_path / "escapee"
    argv = [*ESCAPES[how], str(pidfile)]
    result = run_command(Command(argv), Watch(1.5, grace=1))
    escapee = _wait_pid(pidfile)
    try:
        assert result.outcome == "timeout"
        assert result.pid is not None and _pgid(escapee) != result.pid or not is_alive(escapee)
        assert not is_alive(escapee), f"{how}: pid {escapee} outlived the run"
        assert f"{escapee} " in result.output_tail and "outside its process group" in (
            result.output_tail
        ), result.output_tail
    finally:
        if is_alive(escapee):
            os.kill(escapee, signal.SIGKILL)


def test_escapees_of_a_command_that_exits_are_gone_too(tmp_path: Path) -> None:
    pidfile = tmp_path / "escapee"
    code = (
        "import os, sys, time\n"
        "if os.fork() == 0:\n"
        "    if os.fork() == 0:\n"
        "        os.setsid()\n"
        "        open(sys.argv[1], 'w').write(str(os.getpid()))\n"
        "        time.sleep(100)\n"
        "    os._exit(0)\n"
        "while not os.path.exists(sys.argv[1]): time.sleep(0.01)\n"
        "print('parent done', flush=True)\n"
    )
    result = run_command(Command([PY, "-c", code, str(pidfile)]), Watch(30))
    escapee = _wait_pid(pidfile)
    try:
        assert result.outcome == "ok"
        assert "parent done" in result.output_tail
        assert not is_alive(escapee)
        assert "outside its process group" in result.output_tail
    finally:
        if is_alive(escapee):
            os.kill(escapee, signal.SIGKILL)


def test_concurrent_runs_do_not_kill_each_others_processes(tmp_path: Path) -> None:
    """A run's sweep takes only its own descendants, even those re-parented to this process."""
    import threading

    other_pid = tmp_path / "other"
    code = (
        "import os, sys, time\n"
        "if os.fork() == 0:\n"
        "    if os.fork() == 0:\n"
        "        os.setsid()\n"
        "        open(sys.argv[1], 'w').write(str(os.getpid()))\n"
        "        time.sleep(100)\n"
        "    os._exit(0)\n"
        "while not os.path.exists(sys.argv[2]): time.sleep(0.01)\n"  # runs until the test says
    )
    go = tmp_path / "go"
    results = {}
    thread = threading.Thread(
        target=lambda: results.update(other=run_command(
            Command([PY, "-c", code, str(other_pid), str(go)]),
            Watch(30))))
    thread.start()
    escapee = _wait_pid(other_pid)
    try:
        quick = run_command(Command(["sh", "-c", "echo quick"]), Watch(5))
        assert quick.outcome == "ok"
        assert is_alive(escapee), "a run killed a process of another run"
    finally:
        go.touch()
        thread.join()
    assert results["other"].outcome == "ok"
    assert not is_alive(escapee)
