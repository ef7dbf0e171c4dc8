"""`tickq history --run` and `tickq agent history --run` on a terminal: job and model output
holding escape sequences (a clipboard write, a title change, clear screen) is shown escaped,
through a real pty; through a pipe it stays as it was. Real subprocesses, a real PostgreSQL and
the scripted chat-completions server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

from chat_server import ChatServer, answer
from test_agents import last_run, save_agent, tick, write_registry
from test_cli import registry_file, tickq

REPO = Path(__file__).resolve().parent.parent
# OSC 52 (clipboard), OSC 0 (title), CSI 2J (clear), a C1 CSI, a bidi override.
HOSTILE = "\x1b]52;c;SGVsbG8=\x07\x1b]0;PWNED\x07\x1b[2J\x9b31m\u202eevil done"
RAW = ("\x1b", "\x07", "\x9b", "\u202e")


def on_a_terminal(*args: str) -> str:
    """What `tickq ARGS` writes to its stdout when that is a pty."""
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "TICKQ_REGISTRY")}
    env["PYTHONPATH"] = str(REPO / "python_runner")
    master, slave = os.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "tickq.cli", *args], env=env,
                            stdout=slave, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    os.close(slave)
    chunks = []
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the child closed its end
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(master)
    assert proc.wait(60) == 0, proc.stderr.read()
    return b"".join(chunks).decode("utf-8")


def test_history_of_a_run_escapes_control_characters_on_a_terminal(
    tmp_path: Path, db_url: str
) -> None:
    registry = registry_file(tmp_path, f"""\
        [kinds.loud]
        command = ["{sys.executable}", "-c", "import sys; sys.stdout.write({HOSTILE!r})"]
        every = "5m"
        timeout = "30s"
        """.replace("\\", "\\\\"))
    done = tickq("run", "loud", "--registry", str(registry), "--database-url", db_url)
    assert done.returncode == 0, done.stderr
    runs = json.loads(tickq("history", "loud", "--json", "--database-url", db_url).stdout)
    run_id = str(runs[0]["run_id"])

    shown = on_a_terminal("history", "--run", run_id, "--database-url", db_url)
    assert not any(ch in shown for ch in RAW), repr(shown)
    assert "\\x1b]52;c;SGVsbG8=\\x07" in shown and "\\x9b31m" in shown and "\\u202e" in shown
    assert "evil done" in shown

    piped = tickq("history", "--run", run_id, "--database-url", db_url)
    assert HOSTILE in piped.stdout, "a pipe gets the output as it was"


def test_agent_history_of_a_run_escapes_control_characters_on_a_terminal(
    tmp_path: Path, db_url: str
) -> None:
    with ChatServer([answer(HOSTILE)]) as server:
        registry = write_registry(tmp_path, server.base_url)
        save_agent(db_url, registry, "loud")
        assert tick(registry, db_url, uuid.uuid4().hex).returncode == 0
    run = last_run(db_url, "loud")
    assert run["outcome"] == "ok", run["output_tail"]

    shown = on_a_terminal("agent", "history", "loud", "--run", str(run["id"]),
                          "--database-url", db_url)
    assert not any(ch in shown for ch in RAW), repr(shown)
    assert "\\x1b]0;PWNED\\x07" in shown and "evil done" in shown
    listed = on_a_terminal("agent", "history", "loud", "--database-url", db_url)
    assert not any(ch in listed for ch in RAW), repr(listed)
