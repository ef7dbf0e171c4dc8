"""The harness of the agent tests: a registry with an [agents] section and its tools (one that
records what reached it, one that hangs, a delivery command), an agent saved through SQL, a
real `tickq tick`, the run it left with its transcript, the processes a test started, and every
row the queue stores (to look for a secret in)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb

from tickq.registry import load_registry

REPO = Path(__file__).resolve().parent.parent
KEY_ENV = "TEST_AGENT_KEY"
KEY = "sk-test-7f3a9c2e5b1d-DO-NOT-LEAK"

# A tool: records its argv, its stdin and whether secrets reached its environment, then
# answers with a line the model can read.
SEARCH_TOOL = f"""#!{sys.executable}
import json, os, sys
data = sys.stdin.read()
with open("tool-calls.jsonl", "a") as f:
    f.write(json.dumps({{"argv": sys.argv, "stdin": data,
        "key_in_env": "{KEY_ENV}" in os.environ,
        "key_anywhere": any("{KEY}" in v for v in os.environ.values()),
        "db_url_in_env": "TICKQ_AGENT_DATABASE_URL" in os.environ}}) + "\\n")
print("3 open deals for " + json.loads(data).get("query", "?"))
"""

SLOW_TOOL = """#!/bin/sh
echo "looking..."
exec sleep 60
"""

DELIVER = f"""#!{sys.executable}
import sys
open("delivered.json", "w").write(sys.stdin.read())
"""


def write_registry(folder: Path, base_url: str, **agents: Any) -> Path:
    for name, text in (("search", SEARCH_TOOL), ("slow", SLOW_TOOL), ("deliver", DELIVER)):
        path = folder / name
        path.write_text(text)
        path.chmod(0o755)
    settings = {"base_url": base_url, "model": "test-model", "api_key_env": KEY_ENV,
                "timeout": "1m", "request_timeout": "30s", "http_attempts": 3,
                "deliver": ["./deliver"], **agents}
    lines = ["[settings]", "slots = 2", 'lease_margin = "1m"', "", "[agents]"]
    lines += [f"{k} = {json.dumps(v)}" for k, v in settings.items()]
    lines += [
        "", "[agents.tools.search_crm]", 'command = ["./search"]',
        'description = "Search the CRM for open deals"',
        'parameters = { type = "object", properties = { query = { type = "string" } } }',
        "", "[agents.tools.slow]", 'command = ["./slow"]', 'description = "Takes forever"',
        'timeout = "1s"',
        "", "[agents.tools.patient]", 'command = ["./slow"]', 'description = "Takes its time"',
        'timeout = "5m"',
    ]
    path = folder / "registry.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def save_agent(db_url: str, registry: Path, name: str, **fields: Any) -> int:
    """Sync the registry's [agents] bounds, then save the agent (every agent is due at once)."""
    doc = load_registry(registry).to_sync_json()
    with psycopg.connect(db_url, autocommit=True) as conn:
        conn.execute("SELECT count(*) FROM tickq.sync_registry(%s)", (Jsonb(doc),))
        fields = {"prompt": "Summarise the open deals.", "every": 3600, **fields}
        return conn.execute("SELECT (tickq.save_agent(%s, %s, true)).id",
                            (name, Jsonb(fields))).fetchone()[0]


def tick(
    registry: Path, db_url: str, marker: str, timeout: float = 60,
    env: dict[str, str | None] | None = None,
) -> subprocess.CompletedProcess:
    """`tickq tick` of `registry`; `env` sets (or, given None, unsets) variables of its own."""
    more = env or {}
    env = {k: v for k, v in os.environ.items()
           if k not in ("DATABASE_URL", "TICKQ_REGISTRY") and more.get(k, "") is not None}
    env |= {KEY_ENV: KEY, "TEST_MARKER": marker,
            "PYTHONPATH": str(REPO / "python_runner")}
    env |= {k: v for k, v in more.items() if v is not None}
    return subprocess.run(
        [sys.executable, "-m", "tickq", "tick", "--registry", str(registry),
         "--database-url", db_url],
        cwd=registry.parent, env=env, capture_output=True, text=True, timeout=timeout,
    )


def last_run(db_url: str, name: str) -> dict[str, Any]:
    with psycopg.connect(db_url, autocommit=True, row_factory=dict_row) as conn:
        run = conn.execute(
            "SELECT id, outcome::text, exit_code, output_tail, extract(epoch FROM duration) AS secs"
            " FROM tickq.job_run WHERE kind = %s ORDER BY id DESC LIMIT 1", ("agent." + name,)
        ).fetchone()
        assert run is not None, "the agent did not run"
        run["turns"] = [r["entry"] for r in conn.execute(
            "SELECT entry FROM tickq.agent_transcript(%s)", (run["id"],))]
    return run


def marked_processes(marker: str) -> list[int]:
    """Processes (not zombies) whose environment carries this test's marker."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or int(proc.name) == os.getpid():
            continue
        try:
            if f"TEST_MARKER={marker}".encode() not in (proc / "environ").read_bytes():
                continue
            state = (proc / "stat").read_text().rpartition(")")[2].split()[0]
        except OSError:
            continue
        if state not in ("Z", "X"):
            found.append(int(proc.name))
    return found


def everything_stored(db_url: str) -> str:
    """Every row of every tickq table as text."""
    with psycopg.connect(db_url, autocommit=True) as conn:
        tables = [r[0] for r in conn.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = 'tickq'")]
        return "\n".join(
            str(conn.execute(f"SELECT coalesce(string_agg(to_jsonb(t)::text, ''), '') "  # noqa: S608
                             f"FROM tickq.{table} AS t").fetchone()[0])
            for table in tables)


@pytest.fixture(name="marker")
def a_marker() -> str:
    """A word in the environment of every process a test starts (see marked_processes)."""
    return uuid.uuid4().hex
