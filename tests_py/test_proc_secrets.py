"""Secrets through /proc: a command runs as the same user as its dispatcher, so reading
/proc/$PPID/environ would show it the environment its dispatcher (or, for an agent's tool, the
agent runner) was started with. A real `tickq tick` with DATABASE_URL holding a password and an
agent whose registry names an API key, the real runner and a scripted model server on
127.0.0.1: a kind reads its dispatcher's environment, an agent's tool reads the runner's and the
dispatcher's (its grandparent). Each read succeeds and shows the variables' names, never the
password or the key: not in the output, the transcript, what the model was sent or the logs.

As root (CI), who may read a non-dumpable process's environment too, what is checked is that
the values are gone from the environment block /proc shows; as another user, that the read is
refused as well (the processes are non-dumpable)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path
from urllib.parse import quote

import psycopg
import pytest
from chat_server import ChatServer, answer, tool_call
from psycopg import conninfo
from test_agents import KEY, KEY_ENV, everything_stored, last_run, save_agent, write_registry
from test_secrets import PASSWORD, with_password

REPO = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="needs /proc")
AS_ROOT = os.geteuid() == 0

# Prints the environment of its parent and of its grandparent, one variable a line.
PEEK = """#!/bin/sh
cat > /dev/null
parent=$PPID
grandparent=$(sed 's/.*) //' /proc/$parent/stat | cut -d' ' -f2)
echo "parent $parent"; tr '\\0' '\\n' < /proc/$parent/environ
echo "grandparent $grandparent"; tr '\\0' '\\n' < /proc/$grandparent/environ
"""

KIND = """
[kinds.peek]
command = ["sh", "-c", "tr '\\\\0' '\\\\n' < /proc/$PPID/environ"]
every = "1h"
timeout = "30s"

[agents.tools.peek]
command = ["./peek"]
description = "Peek"
"""


def tick(registry: Path, db_url: str, marker: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "TICKQ_REGISTRY")}
    env |= {KEY_ENV: KEY, "TEST_MARKER": marker, "PYTHONPATH": str(REPO / "python_runner"),
            "DATABASE_URL": with_password(db_url), "PGPASSWORD": PASSWORD}
    return subprocess.run(
        [sys.executable, "-m", "tickq", "tick", "--registry", str(registry)],
        cwd=registry.parent, env=env, capture_output=True, text=True, timeout=90,
    )


def names(text: str) -> set[str]:
    return {line.partition("=")[0] for line in text.splitlines() if "=" in line}


def test_a_kind_and_an_agents_tool_reading_proc_find_no_secret(tmp_path: Path, db_url: str):
    marker = uuid.uuid4().hex
    peek = tmp_path / "peek"
    peek.write_text(PEEK)
    peek.chmod(0o755)
    script = [tool_call("peek", {}, "c1"), answer("Seen.")]
    with ChatServer(script) as server:
        registry = write_registry(tmp_path, server.base_url)
        registry.write_text(registry.read_text() + KIND)
        save_agent(db_url, registry, "spy", tools=["peek"])
        done = tick(registry, db_url, marker)
    assert done.returncode == 0, done.stderr

    with psycopg.connect(db_url, autocommit=True) as conn:
        [kind_tail] = conn.execute(
            "SELECT output_tail FROM tickq.job_run WHERE kind = 'peek'").fetchone()
    # The kind read its dispatcher's environment (the marker is this tick's), names and all.
    if not AS_ROOT:  # the dispatcher is non-dumpable: its environment is not the user's to read
        assert "Permission denied" in kind_tail, kind_tail
    else:
        assert f"TEST_MARKER={marker}" in kind_tail.splitlines()
        assert {"DATABASE_URL", "PGPASSWORD", KEY_ENV} <= names(kind_tail)

    run = last_run(db_url, "spy")
    assert run["outcome"] == "ok", run["output_tail"]
    tool_tail = run["turns"][0]["tool_calls"][0]["output_tail"]
    parent, _, grandparent = tool_tail.partition("\ngrandparent ")
    sent = json.dumps(server.requests[1]["body"])
    if not AS_ROOT:
        assert tool_tail.count("Permission denied") == 2, tool_tail
    else:
        # The runner's environment: the variable it was handed, without its value.
        assert {"TICKQ_AGENT_DATABASE_URL", KEY_ENV} <= names(parent), tool_tail
        # The grandparent is the dispatcher.
        assert f"TEST_MARKER={marker}" in grandparent.splitlines()
        assert {"DATABASE_URL", "PGPASSWORD", KEY_ENV} <= names(grandparent)
        assert "TICKQ_AGENT_DATABASE_URL" in sent  # the tool's output went to the model
    for secret in (PASSWORD, KEY):
        for where, text in (("the kind's output", kind_tail), ("the tool's output", tool_tail),
                            ("the model", sent), ("the tick's log", done.stdout + done.stderr),
                            ("the database", everything_stored(db_url))):
            assert secret not in text, f"{secret} in {where}"
    # The key still reached the model server, as the one place it belongs.
    assert server.requests[0]["headers"]["Authorization"] == f"Bearer {KEY}"


def test_a_tickq_process_is_not_dumpable_and_its_secret_is_wiped(tmp_path: Path):
    """tickq.host.private in a process of its own: after keep_private, prctl(PR_GET_DUMPABLE)
    says 0 and the block /proc shows holds the name, not the value; the process keeps it."""
    probe = (
        "import ctypes, os\n"
        "from tickq.host.private import keep_private\n"
        "print(keep_private(['TEST_SECRET', 'NOT_SET']))\n"
        "print(ctypes.CDLL(None).prctl(3, 0, 0, 0, 0))\n"
        "block = open('/proc/self/environ', 'rb').read().split(b'\\0')\n"
        "print(b'TEST_SECRET=' in block, any(b'hunter2' in e for e in block))\n"
        "print(os.environ['TEST_SECRET'], os.getenv('TEST_SECRET'))\n"
    )
    env = {"PATH": os.environ["PATH"], "PYTHONPATH": str(REPO / "python_runner"),
           "TEST_SECRET": "hunter2"}
    done = subprocess.run([sys.executable, "-B", "-c", probe], env=env, capture_output=True,
                          text=True, timeout=30, check=True)
    assert done.stdout.splitlines() == ["['TEST_SECRET']", "0", "True False",
                                        "hunter2 hunter2"]


def test_a_password_typed_on_the_command_line_is_hidden_from_the_process_list(
    tmp_path: Path, db_url: str
):
    """`tickq tick --database-url postgresql://user:PASSWORD@...`: /proc/PID/cmdline is world
    readable (ps shows it to every user); the kind reads its dispatcher's and finds the
    arguments with the password overwritten, while the tick still connected with it."""
    params = conninfo.conninfo_to_dict(db_url)
    typed = (f"postgresql://{params['user']}:{PASSWORD}@/{params['dbname']}"
             f"?host={quote(str(params['host']), safe='')}")
    registry = tmp_path / "registry.toml"
    registry.write_text(
        '[kinds.ps]\ncommand = ["sh", "-c", "tr \'\\\\0\' \' \' < /proc/$PPID/cmdline"]\n'
        'every = "1h"\ntimeout = "30s"\n')
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "TICKQ_REGISTRY")}
    env["PYTHONPATH"] = str(REPO / "python_runner")
    done = subprocess.run(
        [sys.executable, "-m", "tickq.cli", "tick", "--registry", str(registry),
         "--database-url", typed], cwd=tmp_path, env=env, capture_output=True, text=True,
        timeout=90)
    assert done.returncode == 0, done.stderr
    with psycopg.connect(db_url, autocommit=True) as conn:
        [tail] = conn.execute(
            "SELECT output_tail FROM tickq.job_run WHERE kind = 'ps'").fetchone()
    assert "tickq.cli tick" in tail and "--database-url" in tail, tail
    assert PASSWORD not in tail, tail
    assert "*" * len(PASSWORD) in tail, tail
    assert PASSWORD not in done.stdout + done.stderr
