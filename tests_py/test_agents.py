"""User-built agents end to end: real `tickq tick` processes, the real agent runner, real tool
commands and a real chat-completions server on 127.0.0.1 (tests_py/chat_server.py) replaying
scripted conversations.

Each test writes a registry with an [agents] section into tmp_path, saves an agent through SQL
(the CLI has its own test), runs a tick and checks the run, its transcript, what the server
received and what the tools received.
"""

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
from chat_server import ChatServer, answer, error, raw, stall, tool_call
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


@pytest.fixture
def marker() -> str:
    return uuid.uuid4().hex


# ---------------------------------------------------------------- conversations


def test_plain_answer_is_the_output_and_is_delivered(tmp_path: Path, db_url: str, marker: str):
    with ChatServer([answer("Three deals need a call today.")]) as server:
        registry = write_registry(tmp_path, server.base_url)
        agent_id = save_agent(db_url, registry, "brief", tools=["search_crm"], owner="ana")
        done = tick(registry, db_url, marker)
    assert done.returncode == 0, done.stderr
    run = last_run(db_url, "brief")
    assert run["outcome"] == "ok", run["output_tail"]
    assert run["output_tail"] == "Three deals need a call today.\n"
    assert len(run["turns"]) == 1 and run["turns"][0]["answer"] == "Three deals need a call today."
    assert run["turns"][0]["usage"]["total_tokens"] == 15
    [request] = server.requests
    assert request["path"] == "/v1/chat/completions"
    assert request["headers"]["Authorization"] == f"Bearer {KEY}"
    body = request["body"]
    assert body["model"] == "test-model"
    assert body["messages"][-1] == {"role": "user", "content": "Summarise the open deals."}
    assert [t["function"]["name"] for t in body["tools"]] == ["search_crm"]
    assert body["tools"][0]["function"]["parameters"]["properties"] == {"query": {"type": "string"}}
    delivered = json.loads((tmp_path / "delivered.json").read_text())
    assert delivered == {"agent": "brief", "agent_id": agent_id, "owner": "ana",
                         "run_id": run["id"], "answer": "Three deals need a call today."}
    # The key went to the server only.
    assert KEY not in everything_stored(db_url)
    assert KEY not in done.stdout + done.stderr
    assert KEY not in (tmp_path / "delivered.json").read_text()


def test_tickqs_own_runner_writes_its_bytecode_where_the_dispatcher_does(
    tmp_path: Path, db_url: str, marker: str
):
    """The runner is this interpreter's: a dispatcher told to keep bytecode elsewhere
    (PYTHONPYCACHEPREFIX) or to write none has its runner do the same, so neither writes into
    the installed package's (or a checkout's) folders."""
    prefix = tmp_path / "bytecode"
    with ChatServer([answer("ok.")]) as server:
        registry = write_registry(tmp_path, server.base_url)
        save_agent(db_url, registry, "brief", tools=["search_crm"], owner="ana")
        done = tick(registry, db_url, marker, env={"PYTHONPYCACHEPREFIX": str(prefix),
                                                   "PYTHONDONTWRITEBYTECODE": None})
    assert done.returncode == 0, done.stderr
    assert last_run(db_url, "brief")["outcome"] == "ok"
    assert list(prefix.rglob("tickq/agents/runner.*.pyc")), sorted(prefix.rglob("*"))


def test_two_tool_calls_then_an_answer(tmp_path: Path, db_url: str, marker: str):
    hostile = "'; rm -rf / #"
    script = [tool_call("search_crm", {"query": "acme"}, "c1"),
              tool_call("search_crm", {"query": f"$(touch pwned) {hostile}"}, "c2"),
              answer("Acme has 3 open deals.")]
    with ChatServer(script) as server:
        registry = write_registry(tmp_path, server.base_url)
        save_agent(db_url, registry, "crm", tools=["search_crm"])
        done = tick(registry, db_url, marker)
    assert done.returncode == 0, done.stderr
    run = last_run(db_url, "crm")
    assert run["outcome"] == "ok", run["output_tail"]
    assert [len(t.get("tool_calls", [])) for t in run["turns"]] == [1, 1, 0]
    first = run["turns"][0]["tool_calls"][0]
    assert first["name"] == "search_crm" and json.loads(first["arguments"]) == {"query": "acme"}
    assert first["outcome"] == "ok" and first["output_tail"] == "3 open deals for acme\n"
    # The tool's output went back to the model as the answer to its call.
    assert server.requests[1]["body"]["messages"][-1] == {
        "role": "tool", "tool_call_id": "c1", "content": "3 open deals for acme\n"}
    # The tool got the model's text on stdin only: its argv is the registry's, and neither the
    # key nor the database URL was in its environment.
    calls = [json.loads(line) for line in (tmp_path / "tool-calls.jsonl").read_text().splitlines()]
    assert [c["argv"] for c in calls] == [["./search"], ["./search"]]
    assert json.loads(calls[1]["stdin"]) == {"query": f"$(touch pwned) {hostile}"}
    assert not any(c["key_in_env"] or c["key_anywhere"] or c["db_url_in_env"] for c in calls)
    assert not (tmp_path / "pwned").exists()


def test_a_model_that_keeps_calling_tools_stops_at_turn_six(tmp_path: Path, db_url: str,
                                                            marker: str):
    with ChatServer(lambda i, body: tool_call("search_crm", {"query": f"q{i}"}, f"c{i}")) as server:
        registry = write_registry(tmp_path, server.base_url)
        save_agent(db_url, registry, "loop", tools=["search_crm"])
        done = tick(registry, db_url, marker)
    assert done.returncode == 0, done.stderr
    run = last_run(db_url, "loop")
    assert run["outcome"] == "failed" and run["exit_code"] == 1
    assert "turn limit: turn 6 of 6 still asked for 1 tool call(s)" in run["output_tail"]
    assert [t["turn"] for t in run["turns"]] == [1, 2, 3, 4, 5, 6]
    assert run["turns"][5]["tool_calls"][0]["outcome"].startswith("not run")
    assert len(server.requests) == 6
    # Five tool runs: the sixth turn's call is not run, nobody would read its result.
    assert len((tmp_path / "tool-calls.jsonl").read_text().splitlines()) == 5


def test_a_stalled_server_meets_the_agents_watchdog(tmp_path: Path, db_url: str, marker: str):
    with ChatServer([stall(30)]) as server:
        registry = write_registry(tmp_path, server.base_url)
        save_agent(db_url, registry, "stuck", timeout=3)
        # Without the watchdog the run would wait out the stall (30 s) and end otherwise.
        done = tick(registry, db_url, marker)
    assert done.returncode == 0, done.stderr
    run = last_run(db_url, "stuck")
    assert run["outcome"] == "timeout", run["output_tail"]
    assert "timed out after 3s" in run["output_tail"]
    [turn] = run["turns"]
    assert turn["error"] == "stopped by SIGTERM (the agent's watchdog) during this turn"
    assert marked_processes(marker) == []


def test_500_then_success_is_retried_within_the_run(tmp_path: Path, db_url: str, marker: str):
    script = [error(500, "overloaded"), error(429, f"slow down, key {KEY}"), answer("fine")]
    with ChatServer(script) as server:
        registry = write_registry(tmp_path, server.base_url)
        save_agent(db_url, registry, "flaky")
        done = tick(registry, db_url, marker)
    assert done.returncode == 0, done.stderr
    run = last_run(db_url, "flaky")
    assert run["outcome"] == "ok" and run["output_tail"] == "fine\n"
    [turn] = run["turns"]
    assert turn["attempts"] == 3
    assert turn["retried"] == ["HTTP 500: overloaded", "HTTP 429: slow down, key [redacted]"]
    assert len(server.requests) == 3
    assert KEY not in everything_stored(db_url)
    assert KEY not in done.stdout + done.stderr


def test_a_malformed_body_fails_the_run_with_the_reason(tmp_path: Path, db_url: str, marker: str):
    with ChatServer([raw("<html>bad gateway</html>")] * 3) as server:
        registry = write_registry(tmp_path, server.base_url, http_attempts=2)
        save_agent(db_url, registry, "garbled")
        done = tick(registry, db_url, marker)
    assert done.returncode == 0, done.stderr
    run = last_run(db_url, "garbled")
    assert run["outcome"] == "failed"
    assert "model server: malformed response: not JSON" in run["output_tail"]
    assert "(after 2 tries)" in run["output_tail"]
    assert len(server.requests) == 2
    assert "error" in run["turns"][0]


def test_a_refused_request_fails_at_once_with_the_servers_message(tmp_path: Path, db_url: str,
                                                                  marker: str):
    with ChatServer([error(404, "model 'test-model' not found")]) as server:
        registry = write_registry(tmp_path, server.base_url)
        save_agent(db_url, registry, "nomodel")
        tick(registry, db_url, marker)
    run = last_run(db_url, "nomodel")
    assert run["outcome"] == "failed"
    assert "HTTP 404: model 'test-model' not found" in run["output_tail"]
    assert len(server.requests) == 1


def test_a_tool_that_hangs_is_stopped_by_its_own_watchdog(tmp_path: Path, db_url: str,
                                                          marker: str):
    script = [tool_call("slow", {}), answer("The search timed out; try later.")]
    with ChatServer(script) as server:
        registry = write_registry(tmp_path, server.base_url)
        save_agent(db_url, registry, "patient", tools=["slow"], timeout=30)
        done = tick(registry, db_url, marker)
    assert done.returncode == 0, done.stderr
    run = last_run(db_url, "patient")
    assert run["outcome"] == "ok", run["output_tail"]
    call = run["turns"][0]["tool_calls"][0]
    assert call["outcome"] == "timeout" and "looking..." in call["output_tail"]
    assert call["duration_s"] < 5
    assert server.requests[1]["body"]["messages"][-1]["content"].startswith(
        "error: the tool timed out after 1s")
    assert run["secs"] < 15
    assert marked_processes(marker) == []


def test_the_agents_watchdog_stops_the_tool_it_is_running(tmp_path: Path, db_url: str,
                                                          marker: str):
    with ChatServer([tool_call("patient", {})]) as server:
        registry = write_registry(tmp_path, server.base_url)
        save_agent(db_url, registry, "overrun", tools=["patient"], timeout=3)
        done = tick(registry, db_url, marker)
    assert done.returncode == 0, done.stderr
    run = last_run(db_url, "overrun")
    assert run["outcome"] == "timeout", run["output_tail"]
    assert run["secs"] < 10
    [turn] = run["turns"]
    assert turn["error"].startswith("stopped by SIGTERM")
    assert [(c["name"], c["outcome"]) for c in turn["tool_calls"]] == [("patient", "running")]
    assert marked_processes(marker) == []


def test_a_missing_key_fails_the_run_without_calling_the_server(tmp_path: Path, db_url: str,
                                                                marker: str):
    with ChatServer([answer("x")]) as server:
        registry = write_registry(tmp_path, server.base_url, api_key_env="NOT_SET_ANYWHERE")
        save_agent(db_url, registry, "nokey")
        tick(registry, db_url, marker)
    run = last_run(db_url, "nokey")
    assert run["outcome"] == "failed"
    assert "NOT_SET_ANYWHERE (agents.api_key_env) is not set" in run["output_tail"]
    assert server.requests == []


# ---------------------------------------------------------------- the security rule

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
