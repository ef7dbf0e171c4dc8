"""User-built agents end to end: real `tickq tick` processes, the real agent runner, real tool
commands and a real chat-completions server on 127.0.0.1 (tests_py/chat_server.py) replaying
scripted conversations.

Each test writes a registry with an [agents] section into tmp_path, saves an agent through SQL
(the CLI has its own test), runs a tick and checks the run, its transcript, what the server
received and what the tools received. The watchdogs: test_agents_watchdogs.py; the argv that
runs: test_agents_runner_argv.py; the harness: agent_harness.py.
"""

from __future__ import annotations

import json
from pathlib import Path

# KEY_ENV, REPO and marked_processes: other test modules import the harness from here too.
from agent_harness import (
    KEY,
    KEY_ENV,  # noqa: F401
    REPO,  # noqa: F401
    a_marker,  # noqa: F401 (the marker fixture)
    everything_stored,
    last_run,
    marked_processes,  # noqa: F401
    save_agent,
    tick,
    write_registry,
)
from chat_server import ChatServer, answer, error, raw, tool_call

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
