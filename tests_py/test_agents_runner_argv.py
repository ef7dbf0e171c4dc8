"""The security rule of agents, end to end (as in test_agents.py): what people edit in psql
never changes the argv that runs (the runner gets the agent's id and nothing else), and the
runner takes only a numeric id."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest
from agent_harness import (
    REPO,
    a_marker,  # noqa: F401 (the marker fixture)
    last_run,
    save_agent,
    tick,
    write_registry,
)
from chat_server import ChatServer

ARGV_DUMP = f"""#!{sys.executable}
import json, os, sys
with open("runner-argv.jsonl", "a") as f:
    f.write(json.dumps({{"argv": sys.argv, "env": dict(os.environ)}}) + "\\n")
print("runner ran")
"""


def test_edits_in_psql_never_change_the_argv_that_runs(tmp_path: Path, db_url: str, marker: str):
    runner = tmp_path / "argv-dump"
    runner.write_text(ARGV_DUMP)
    runner.chmod(0o755)
    with ChatServer([]) as server:
        registry = write_registry(tmp_path, server.base_url, runner=["./argv-dump"])
        agent_id = save_agent(db_url, registry, "target", tools=["search_crm"])
        hostile = "$(touch pwned); `touch pwned` && rm -rf ~ ; ../../../../bin/sh -c id"
        with psycopg.connect(db_url, autocommit=True) as conn:
            conn.execute("UPDATE tickq.agent SET prompt = %s, owner = %s WHERE name = 'target'",
                         (hostile, "../../../etc/passwd; touch pwned"))
            # The kind's mirror is for people reading psql; nothing in it is ever run.
            conn.execute("""UPDATE tickq.job_kind SET registry = '{"agent": "1; touch pwned",
                "command": ["sh", "-c", "touch pwned"]}' WHERE name = 'agent.target'""")
            with pytest.raises(psycopg.Error) as refused:
                conn.execute("UPDATE tickq.agent SET name = '$(touch pwned)' WHERE name = 'target'")
            assert refused.value.sqlstate == "TQ040"
        done = tick(registry, db_url, marker)
    assert done.returncode == 0, done.stderr
    lines = (tmp_path / "runner-argv.jsonl").read_text().splitlines()
    [seen] = [json.loads(line) for line in lines]
    assert seen["argv"] == ["./argv-dump", str(agent_id)]
    assert not any(hostile in v or "passwd" in v for v in seen["env"].values())
    assert seen["env"]["TICKQ_KIND"] == "agent.target"
    assert seen["env"]["TICKQ_AGENT_DATABASE_URL"] == db_url
    assert not (tmp_path / "pwned").exists()
    assert last_run(db_url, "target")["output_tail"] == "runner ran\n"


def test_the_runner_takes_only_a_numeric_agent_id(tmp_path: Path):
    env = {**os.environ, "PYTHONPATH": str(REPO / "python_runner")}
    for bad in ("1; touch pwned", "-1", "../1", "1 2"):
        done = subprocess.run([sys.executable, "-m", "tickq", "agent", "exec", bad],
                              cwd=tmp_path, env=env, capture_output=True, text=True, timeout=30)
        assert done.returncode == 2, (bad, done.stderr)
        assert ("an agent id is a positive whole number" in done.stderr
                or "unrecognized" in done.stderr)
    assert not (tmp_path / "pwned").exists()
