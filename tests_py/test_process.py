"""process.py with real processes and real signals: exit codes, the watchdog, the process group,
the bounded output tail, start failures and shutdown."""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TypeVar

import pytest
from processes import is_alive

from tickq.host.process import Command, Watch, run_command

PY = sys.executable
T = TypeVar("T")


def wait_for_file(path: Path, seconds: float = 5.0) -> str:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if path.exists() and path.read_text().strip():
            return path.read_text().strip()
        time.sleep(0.01)
    raise AssertionError(f"{path} never written")


def finishes(call: Callable[[], T], seconds: float = 60) -> T:
    """What `call` returns, which must come within `seconds` (a guard against a hang: the
    commands of these tests would go on for 100 s or more if the run waited for them)."""
    outcome: list[tuple[bool, object]] = []

    def call_it() -> None:
        try:
            outcome.append((True, call()))
        except BaseException as exc:  # raised again in the test's thread
            outcome.append((False, exc))

    thread = threading.Thread(target=call_it, daemon=True)  # a hung call is left behind
    thread.start()
    thread.join(seconds)
    assert outcome, f"still running after {seconds} s"
    [(ok, value)] = outcome
    if not ok:
        raise value  # type: ignore[misc]
    return value  # type: ignore[return-value]


def test_exit_zero_is_ok() -> None:
    result = run_command(Command(["sh", "-c", "echo hello; echo oops >&2"]), Watch(10))
    assert result.outcome == "ok"
    assert result.exit_code == 0
    assert result.output_tail == "hello\noops\n"  # stderr goes to the same tail
    assert result.pid is not None and result.pid > 0
    assert result.duration >= 0


def test_nonzero_exit_is_failed() -> None:
    result = run_command(Command(["sh", "-c", "echo bad; exit 3"]), Watch(10))
    assert (result.outcome, result.exit_code, result.output_tail) == ("failed", 3, "bad\n")


def test_killed_by_a_signal_has_a_negative_exit_code() -> None:
    result = run_command(Command(["sh", "-c", "kill -9 $$"]), Watch(10))
    assert (result.outcome, result.exit_code) == ("failed", -signal.SIGKILL)


def test_no_shell_and_no_stdin() -> None:
    result = run_command(
        Command([PY, "-c", "import sys; print(sys.argv[1:], sys.stdin.read())", "$HOME;"]),
        Watch(10))
    assert result.output_tail == "['$HOME;'] \n"


def test_timeout_kills_the_command_and_its_child(tmp_path: Path) -> None:
    pidfile = tmp_path / "pidfile"
    result = finishes(lambda: run_command(
        Command(["sh", "-c", f"sleep 100 & echo $! > {pidfile}; echo waiting; wait"]),
        Watch(1, grace=2)))
    grandchild = int(pidfile.read_text())
    assert result.outcome == "timeout"
    assert result.exit_code == -signal.SIGTERM
    assert result.output_tail.startswith("waiting\n")
    assert "timed out after 1s" in result.output_tail
    assert not is_alive(grandchild)


def test_command_ignoring_sigterm_is_killed_after_grace(tmp_path: Path) -> None:
    """SIGTERM at the timeout; the command goes on (it notes the signal, then a line each round
    of its loop) through the grace; SIGKILL then."""
    noted = tmp_path / "noted"
    result = run_command(
        Command(["sh", "-c", f"trap 'echo TERM >> {noted}' TERM; "
                             f"while :; do sleep 0.01; echo alive >> {noted}; done"]),
        Watch(1, grace=1.0))
    assert result.outcome == "timeout"
    assert result.exit_code == -signal.SIGKILL
    assert "sent SIGKILL" in result.output_tail
    # Killed at once, the shell would not have gone round its loop (about 75 rounds a second
    # here, 3 or so when SIGKILL follows SIGTERM at once).
    after = noted.read_text().split("TERM\n", 1)
    assert len(after) == 2 and after[1].count("alive\n") >= 20, noted.read_text()[-200:]


def test_a_child_left_running_after_a_normal_exit_is_killed(tmp_path: Path) -> None:
    pidfile = tmp_path / "pidfile"
    result = run_command(
        Command(["sh", "-c", f"sleep 100 & echo $! > {pidfile}; echo done"]),
        Watch(10))
    assert result.outcome == "ok"
    assert result.output_tail.startswith("done\n")
    assert not is_alive(int(pidfile.read_text()))


def test_a_grandchild_holding_stdout_does_not_hang_the_run() -> None:
    # The grandchild keeps the pipe's write end; it is in the group, so it is killed.
    result = finishes(lambda: run_command(
        Command(["sh", "-c", "(sleep 100; echo late) & echo parent done"]), Watch(300)))
    assert result.outcome == "ok"
    assert "parent done" in result.output_tail
    assert "late" not in result.output_tail


def test_a_grandchild_escaping_the_group_with_stdout_open_does_not_hang(tmp_path: Path) -> None:
    pidfile = tmp_path / "pidfile"
    code = (
        "import subprocess, sys\n"
        "p = subprocess.Popen(['sleep', '100'], start_new_session=True)\n"
        f"open({str(pidfile)!r}, 'w').write(str(p.pid))\n"
        "print('parent done', flush=True)\n"
    )
    try:
        result = finishes(lambda: run_command(Command([PY, "-c", code]), Watch(300)))
        assert result.outcome == "ok"
        assert "parent done" in result.output_tail
        assert not is_alive(int(wait_for_file(pidfile)))  # and it did not outlive the run
    finally:
        escaped = int(wait_for_file(pidfile))
        if is_alive(escaped):
            os.kill(escaped, signal.SIGKILL)


def test_huge_output_keeps_exactly_the_last_tail_bytes() -> None:
    # 50 MB of lines numbered so that any cut shows; the last line is unique.
    code = (
        "import sys\n"
        "out = sys.stdout.buffer\n"
        "line = b'%09d ' + b'x' * 89 + b'\\n'\n"  # 100 bytes a line
        "for i in range(500_000): out.write(line % i)\n"
        "out.write(b'THE END')\n"
    )
    result = run_command(Command([PY, "-c", code]), Watch(60))
    assert result.outcome == "ok"
    # Header and tail together fill the column's 65,536 characters exactly (all ASCII here).
    marker_len = len(f"[... {500_000 * 100 + 7 - 65500} bytes omitted ...]\n")
    omitted = 500_000 * 100 + len("THE END") - (65536 - marker_len)
    marker = f"[... {omitted} bytes omitted ...]\n"
    assert result.output_tail.startswith(marker)
    assert len(result.output_tail) == 65536
    tail = result.output_tail[len(marker) :].encode()
    expected = b"".join(b"%09d " % i + b"x" * 89 + b"\n" for i in range(499_300, 500_000))
    assert tail == (expected + b"THE END")[-len(tail):]


def test_small_tail_limit() -> None:
    result = run_command(Command(["sh", "-c", "printf 0123456789"]), Watch(10, tail_bytes=4))
    assert result.output_tail == "[... 6 bytes omitted ...]\n6789"


def test_non_utf8_output_is_replaced() -> None:
    code = "import sys; sys.stdout.buffer.write(b'ok \\xff\\xfe bad \\x00 nul \\xc3\\xa9')"
    result = run_command(Command([PY, "-c", code]), Watch(10))
    assert result.outcome == "ok"
    assert result.output_tail == "ok \ufffd\ufffd bad \ufffd nul \u00e9"


def test_cut_does_not_start_inside_a_utf8_character() -> None:
    code = "import sys; sys.stdout.buffer.write('é'.encode() * 10)"  # 2 bytes each
    result = run_command(Command([PY, "-c", code]), Watch(10, tail_bytes=5))
    assert result.output_tail == "[... 16 bytes omitted ...]\néé"


def test_missing_executable_is_failed_with_reason(tmp_path: Path) -> None:
    result = run_command(Command([str(tmp_path / "bin" / "nope"), "--x"]), Watch(10))
    assert (result.outcome, result.exit_code, result.pid) == ("failed", None, None)
    assert "cannot start" in result.output_tail
    assert "No such file or directory" in result.output_tail
    assert str(tmp_path / "bin" / "nope") in result.output_tail


def test_non_executable_file_is_failed_with_reason(tmp_path: Path) -> None:
    script = tmp_path / "script.sh"
    script.write_text("#!/bin/sh\necho hi\n")
    script.chmod(0o644)
    result = run_command(Command([str(script)]), Watch(10))
    assert (result.outcome, result.exit_code) == ("failed", None)
    assert "Permission denied" in result.output_tail


def test_missing_cwd_is_failed_with_reason(tmp_path: Path) -> None:
    result = run_command(Command(["true"], cwd=tmp_path / "gone"), Watch(10))
    assert (result.outcome, result.exit_code) == ("failed", None)
    assert "cwd" in result.output_tail


def test_empty_command_is_failed() -> None:
    result = run_command(Command([]), Watch(10))
    assert (result.outcome, result.exit_code) == ("failed", None)
    assert "empty command" in result.output_tail


def test_stop_event_interrupts_the_run(tmp_path: Path) -> None:
    pidfile = tmp_path / "pidfile"
    stop = threading.Event()
    timer = threading.Timer(0.5, stop.set)
    timer.start()
    result = run_command(
        Command(["sh", "-c", f"sleep 100 & echo $! > {pidfile}; echo working; wait"]),
        Watch(60, grace=2, stop=stop))
    timer.join()
    assert result.outcome == "interrupted"
    assert result.exit_code == -signal.SIGTERM
    assert result.output_tail == (
        "working\n[tickq: interrupted by dispatcher shutdown (SIGTERM)]\n"
    )
    assert result.duration < 3
    assert not is_alive(int(pidfile.read_text()))


def test_stop_event_already_set_starts_nothing() -> None:
    stop = threading.Event()
    stop.set()
    result = run_command(Command(["sh", "-c", "echo should not run"]), Watch(10, stop=stop))
    assert (result.outcome, result.pid) == ("interrupted", None)
    assert "should not run" not in result.output_tail


def test_env_is_given_not_inherited_and_cwd_applied(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TICKQ_TEST_INHERITED", "from parent")
    result = run_command(
        Command(["sh", "-c", 'echo "$TICKQ_TEST_INHERITED|$JOB_MODE|$(pwd -P)"'], cwd=tmp_path,
                env={"JOB_MODE": "full"}),
        Watch(10))
    # Only the documented minimal set is inherited (tickq.host.process.INHERITED).
    assert result.output_tail == f"|full|{tmp_path.resolve()}\n"


def test_concurrent_runs_in_threads_are_independent(tmp_path: Path) -> None:
    # Each command waits until all eight have started: one after another, the first would
    # wait for the others until its timeout.
    def run(i: int):
        return run_command(
            Command(["sh", "-c", f"touch {tmp_path}/{i}; "
                     f"while [ $(ls {tmp_path} | wc -l) -lt 8 ]; do sleep 0.01; done; "
                     f"echo run {i}; exit {i % 2}"]),
            Watch(30))

    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(run, range(8)))
    for i, result in enumerate(results):
        assert result.output_tail == f"run {i}\n"
        assert result.outcome == ("ok" if i % 2 == 0 else "failed")
    assert len({r.pid for r in results}) == 8


def test_stdin_data_reaches_the_command_and_an_unread_stdin_does_not_block() -> None:
    read = run_command(Command(["sh", "-c", "cat"], stdin=b'{"kind": "x"}'), Watch(10))
    assert (read.outcome, read.output_tail) == ("ok", '{"kind": "x"}')
    big = b"x" * (4 * 1024 * 1024)  # far more than a pipe buffer
    ignored = finishes(lambda: run_command(Command(["sh", "-c", "sleep 300"], stdin=big),
                                           Watch(1, grace=1)))
    assert ignored.outcome == "timeout"
