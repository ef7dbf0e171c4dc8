"""Run one argv in its own process group under a watchdog, keeping a bounded tail of its output
(host/tail.py), stopped by a stop event or a run's own stop (host/stops.py).

run_command is safe to call from several threads at once: each call owns its process, its
reader thread and its buffer, and signals go to that call's process group only.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, NamedTuple

from tickq.host import descendants
from tickq.host.ledger import Ledger, group_alive, signal_group, wait_group_gone
from tickq.host.stops import RunStop, Stop
from tickq.host.tail import Reader, compose

Outcome = Literal["ok", "failed", "timeout", "interrupted", "cancelled"]

_POLL = 0.05  # seconds between checks of the child, the clock and the stop event
_DRAIN = 1.0  # how long to keep reading after the whole group is gone (or escaped)
_KILL_WAIT = 2.0  # how long to wait for SIGKILLed members to disappear
_SCAN_EVERY = 0.5  # seconds between looks at the run's process tree (descendants.Tree)


# What a command inherits from the dispatcher's environment: enough to find programs, write
# temporary files and format text; never the database URL, PG* variables or tickq's settings.
# Everything else comes from the registry's `env` (and TICKQ_KIND, TICKQ_RUN_ID, ...).
INHERITED = ("PATH", "HOME", "LANG", "TZ", "USER", "LOGNAME", "TMPDIR")
INHERITED_PREFIXES = ("LC_",)


def inherited_environment(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The variables of `environ` (default os.environ) a command gets (INHERITED)."""
    environ = os.environ if environ is None else environ
    return {k: v for k, v in environ.items()
            if k in INHERITED or k.startswith(INHERITED_PREFIXES)}


class RunResult(NamedTuple):
    outcome: Outcome
    exit_code: int | None  # negative signal number when killed by a signal, like Popen
    output_tail: str
    duration: float  # seconds, monotonic clock
    pid: int | None  # None when the command never started


class Command(NamedTuple):
    """What to run: an argv (no shell), in `cwd`, with `env` over what it inherits
    (INHERITED: nothing else of this process's environment reaches it), and `stdin` written to
    its standard input (then closed) from a thread of its own, so a command that never reads
    it cannot block the watchdog."""

    argv: Sequence[str]
    cwd: str | Path | None = None
    env: Mapping[str, str] | None = None
    stdin: bytes | None = None


class Watch(NamedTuple):
    """How to watch it: stopped after `timeout` seconds, or when `stop` is set (SIGTERM, or the
    signal the stop carries, then SIGKILL after `grace`); the last `tail_bytes` of its output
    kept. `ledger`, when given, holds an entry for the command's process group (with `labels`)
    while the group lives, so that if this process dies, the next dispatcher on the host stops
    the group. `on_output`, when given, gets each chunk of output as it is read (`tickq run`
    streams it), from the reader thread; an exception it raises stops the streaming, never the
    run."""

    timeout: float
    grace: float = 5.0
    tail_bytes: int = 65536
    stop: Stop | None = None
    ledger: Ledger | None = None
    labels: Mapping[str, Any] | None = None
    on_output: Callable[[bytes], None] | None = None


def run_command(command: Command, watch: Watch) -> RunResult:
    """Run `command` under `watch` and return how it ended; never raises for a command's
    failure."""
    started = time.monotonic()
    descendants.become_subreaper()
    token = os.urandom(16).hex()  # what secrets.token_hex does, without importing secrets
    refused = _not_started(watch.stop)
    if refused is not None:
        return RunResult(refused[0], None, refused[1], time.monotonic() - started, None)
    try:
        proc = _spawn(command, token)
    except (OSError, ValueError, IndexError) as e:
        note = f"[tickq: {_cannot_start(command, e)}]\n"
        return RunResult("failed", None, note, time.monotonic() - started, None)
    assert proc.stdout is not None
    reader = Reader(proc.stdout.fileno(), watch.tail_bytes, watch.on_output)
    reader.start()
    if command.stdin is not None:
        threading.Thread(target=_feed, args=(proc, command.stdin), daemon=True).start()
    notes: list[str] = []
    tree = descendants.Tree(proc.pid, token)
    if watch.ledger is not None:
        problem = watch.ledger.record(proc.pid, token=token, **(watch.labels or {}))
        if problem:
            notes.append(f"[tickq: {problem}; it would outlive a killed dispatcher]")
    try:
        outcome = _supervise(proc, tree, started, watch, notes)
    finally:
        if proc.poll() is None:  # only when something above raised
            signal_group(proc.pid, signal.SIGKILL)
            tree.kill()
            proc.wait()
        if watch.ledger is not None:
            watch.ledger.forget(proc.pid)
        reader.finish(_DRAIN)
        proc.stdout.close()
    tail = compose(*reader.parts(), notes)
    return RunResult(outcome, proc.returncode, tail, time.monotonic() - started, proc.pid)


def _not_started(stop: Stop | None) -> tuple[Outcome, str] | None:
    """The outcome and note of a command its stop refuses before it starts, else None."""
    if isinstance(stop, RunStop) and stop.cancelled:
        return "cancelled", f"[tickq: not started: {stop.note()}]\n"
    if stop is not None and stop.is_set():
        return "interrupted", "[tickq: not started: dispatcher is shutting down]\n"
    return None


def _spawn(command: Command, token: str) -> subprocess.Popen[bytes]:
    """The command in a session (so a process group) of its own, no shell, its output on one
    pipe; its environment what it inherits (INHERITED) plus its `env` and the run's token."""
    return subprocess.Popen(
        list(command.argv),
        shell=False,
        start_new_session=True,
        stdin=subprocess.DEVNULL if command.stdin is None else subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        cwd=command.cwd,
        env={**inherited_environment(), **(command.env or {}), descendants.TOKEN_VARIABLE: token},
    )


def _supervise(
    proc: subprocess.Popen[bytes], tree: descendants.Tree, started: float, watch: Watch,
    notes: list[str],
) -> Outcome:
    """Watch the command until it ends, times out or is interrupted; then make sure nothing of
    it is left: its group, and any process of its tree that left the group. Notes what it did."""
    timeout, grace, stop_event = watch.timeout, watch.grace, watch.stop
    outcome = _watch(proc, started + timeout, stop_event, tree)
    if outcome == "timeout":
        notes.append(f"[tickq: timed out after {timeout:g}s; sent SIGTERM to its process group]")
    sent = signal.SIGTERM
    if outcome == "interrupted" and isinstance(stop_event, RunStop) and stop_event.cancelled:
        outcome = "cancelled"
        notes.append(f"[tickq: {stop_event.note()}; sent SIGTERM to its process group]")
    elif outcome == "interrupted":
        sent = getattr(stop_event, "signum", signal.SIGTERM)
        notes.append(f"[tickq: interrupted by dispatcher shutdown ({sent.name})]")
    escaped: dict[int, descendants.Proc] = {}
    if outcome in ("timeout", "interrupted", "cancelled"):
        signal_group(proc.pid, sent)
        escaped.update(_outside(tree.signal(sent), proc.pid))
        if not _wait_all_gone(proc, tree, grace):
            notes.append(f"[tickq: still running {grace:g}s after {sent.name}; sent SIGKILL]")
    else:
        proc.wait()
        outcome = "ok" if proc.returncode == 0 else "failed"
    # No member of the group, and no process that left it, may outlive the run.
    if group_alive(proc.pid):
        signal_group(proc.pid, signal.SIGKILL)
        if outcome in ("ok", "failed"):
            notes.append("[tickq: killed processes left in the group after the command exited]")
    escaped.update(_outside(tree.kill(), proc.pid))
    if escaped:
        notes.append(
            f"[tickq: killed {len(escaped)} process(es) outside its process group: "
            f"{descendants.describe(escaped)}]"
        )
    wait_group_gone(proc.pid, _KILL_WAIT, proc)
    return outcome


def _feed(proc: subprocess.Popen[bytes], data: bytes) -> None:
    assert proc.stdin is not None
    with contextlib.suppress(OSError):  # the command exited or closed its stdin: fine
        proc.stdin.write(data)
    with contextlib.suppress(OSError):
        proc.stdin.close()


def _outside(procs: dict[int, descendants.Proc], pgid: int) -> dict[int, descendants.Proc]:
    return {pid: p for pid, p in procs.items() if p.pgrp != pgid}


def _wait_all_gone(proc: subprocess.Popen[bytes], tree: descendants.Tree, seconds: float) -> bool:
    """Wait until the group and every process of the run's tree are gone; False after
    `seconds`."""
    deadline = time.monotonic() + seconds
    if not wait_group_gone(proc.pid, seconds, proc):
        return False
    while True:
        tree.reap()
        if not _outside(tree.scan(), proc.pid):
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.02)


def _watch(
    proc: subprocess.Popen[bytes],
    deadline: float,
    stop_event: Stop | None,
    tree: descendants.Tree,
) -> Outcome | None:
    """Wait until the child exits (None), the deadline passes or the stop event is set. Looks
    at the run's process tree now and then, so a process that later clears its environment is
    still known as the run's."""
    next_scan = time.monotonic() + _SCAN_EVERY
    while proc.poll() is None:
        if time.monotonic() >= next_scan:
            tree.scan()
            next_scan = time.monotonic() + _SCAN_EVERY
        left = deadline - time.monotonic()
        if left <= 0:
            return "timeout"
        if stop_event is not None and stop_event.is_set():
            return "interrupted"
        wait = min(_POLL, left)
        if stop_event is not None:
            stop_event.wait(wait)
        else:
            time.sleep(wait)
    return None


def _cannot_start(command: Command, error: Exception) -> str:
    argv, cwd = command.argv, command.cwd
    if not argv:
        return "cannot start: empty command"
    reason = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
    filename = error.filename if isinstance(error, OSError) else None
    if filename is not None and cwd is not None and str(filename) == str(cwd):
        reason += f" (cwd {str(cwd)!r})"
    elif filename not in (None, argv[0]):
        reason += f" ({filename})"
    return f"cannot start {argv[0]!r}: {reason}"
