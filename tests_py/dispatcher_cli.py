"""Running the `tickq` CLI as a subprocess against a test's database: a registry of small
shell commands written into a folder, the CLI's argv and environment, waiting for an event, the
runs in tickq.job_run, and the intervals TIMED_JOB logs; fixtures that clean up processes."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

REPO = Path(__file__).resolve().parent.parent

# Appends "start KIND NS RUN_ID ATTEMPT TRIGGER" and "end KIND NS" to times.log around a sleep.
TIMED_JOB = """#!/bin/sh
echo "start $TICKQ_KIND $(date +%s%N) $TICKQ_RUN_ID $TICKQ_ATTEMPT $TICKQ_TRIGGER" >> times.log
sleep "${1:-1}"
echo "end $TICKQ_KIND $(date +%s%N)" >> times.log
"""


def toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value)  # a JSON string is a valid TOML basic string
    if isinstance(value, list | tuple):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    raise TypeError(value)


def write_registry(
    folder: Path, kinds: dict[str, dict[str, Any]], settings: dict[str, Any] | None = None
) -> Path:
    lines = ["[settings]"]
    lines += [f"{k} = {toml_value(v)}" for k, v in (settings or {}).items()]
    for name, table in kinds.items():
        lines += ["", f"[kinds.{name}]"]
        lines += [f"{k} = {toml_value(v)}" for k, v in table.items()]
    path = folder / "registry.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def write_script(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text)
    path.chmod(0o755)
    return path


def cli_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("DATABASE_URL", "TICKQ_REGISTRY", "TICKQ_LOG_FORMAT", "COLUMNS")}
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(REPO / "python_runner"), os.environ.get("PYTHONPATH")) if p
    )
    return env


def tickq_argv(command: str, registry: Path, db_url: str, *extra: str) -> list[str]:
    return [sys.executable, "-m", "tickq.cli", command, "--registry", str(registry),
            "--database-url", db_url, *extra]


def run_tickq(
    command: str, registry: Path, db_url: str, *extra: str, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        tickq_argv(command, registry, db_url, *extra), env=cli_env(), capture_output=True,
        text=True, timeout=timeout,
    )


def start_tickq(command: str, registry: Path, db_url: str, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        tickq_argv(command, registry, db_url, *extra), env=cli_env(), stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True,
    )


def wait_for(what: str, check: Callable[[], Any], seconds: float = 15.0) -> Any:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def runs(conn: psycopg.Connection) -> list[dict[str, Any]]:
    """The runs of the registry's kinds (built-in kinds, named tickq.*, are left out)."""
    cur = conn.execute(
        "SELECT id, kind, attempt, run_trigger::text AS run_trigger, dispatcher, started_at,"
        " outcome::text AS outcome, exit_code, output_tail FROM tickq.job_run"
        " WHERE kind NOT LIKE 'tickq.%' ORDER BY id"
    )
    names = [c.name for c in cur.description or ()]
    return [dict(zip(names, row)) for row in cur.fetchall()]


def intervals(log: Path) -> dict[str, list[tuple[int, int]]]:
    """kind -> [(start_ns, end_ns)] from a times.log written by TIMED_JOB."""
    starts: dict[str, list[int]] = {}
    done: dict[str, list[tuple[int, int]]] = {}
    for line in log.read_text().splitlines():
        word, kind, ns, *_ = line.split()
        if word == "start":
            starts.setdefault(kind, []).append(int(ns))
        else:
            done.setdefault(kind, []).append((starts[kind].pop(0), int(ns)))
    assert not any(starts.values()), f"a command started and never ended: {starts}"
    return done


def max_overlap(spans: list[tuple[int, int]]) -> int:
    events = sorted([(s, 1) for s, _ in spans] + [(e, -1) for _, e in spans])  # end before start
    most = now = 0
    for _, delta in events:
        now += delta
        most = max(most, now)
    return most


@pytest.fixture
def kill_later() -> Iterator[list[int]]:
    """Pids to SIGKILL at teardown (commands a killed dispatcher left behind)."""
    pids: list[int] = []
    yield pids
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


@pytest.fixture
def stop_later() -> Iterator[list[subprocess.Popen[str]]]:
    """tickq processes to kill if a test fails while they run."""
    procs: list[subprocess.Popen[str]] = []
    yield procs
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
        proc.communicate()
