"""Agent runs against a hostile model server: huge, deep and trickling replies, through real
`tickq tick` subprocesses, the real runner and the scripted server of tests_py/chat_server.py.
Each ends in a recorded, bounded turn and a one-line reason; the runner's peak RSS is read
from getrusage(RUSAGE_CHILDREN) of a process that only waits for the tick."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from chat_server import ChatServer, answer, huge, raw_bytes, tool_call, trickle
from test_agents import KEY, KEY_ENV, REPO, last_run, save_agent, tick, write_registry

MIB = 1 << 20
# Waits for the command in its argv, then prints the largest peak RSS (KiB) of what it waited
# for: the tick, and the runner the tick waited for.
PEAK = ("import resource, subprocess, sys; done = subprocess.run(sys.argv[1:]); "
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr); "
        "sys.exit(done.returncode)")


@pytest.fixture
def marker() -> str:
    return uuid.uuid4().hex


def measured_tick(registry: Path, db_url: str, marker: str) -> tuple[int, int]:
    """(exit status, peak RSS in KiB) of one tick and the runs it waited for."""
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "TICKQ_REGISTRY")}
    env |= {KEY_ENV: KEY, "TEST_MARKER": marker, "PYTHONPATH": str(REPO / "python_runner")}
    done = subprocess.run(
        [sys.executable, "-c", PEAK, sys.executable, "-m", "tickq", "tick", "--registry",
         str(registry), "--database-url", db_url],
        cwd=registry.parent, env=env, capture_output=True, text=True, timeout=120,
    )
    return done.returncode, int(done.stderr.strip().splitlines()[-1])


def reason_lines(run: dict) -> list[str]:
    tail = run["output_tail"]
    assert "Traceback" not in tail and "RecursionError" not in tail, tail
    return [line for line in tail.splitlines() if line.startswith("[agent:")]


def thousand_calls() -> bytes:
    """A reply of 1,000 tool calls, the first with 10 MB of arguments, and a usage of 1e400."""
    calls = [{"id": f"call_{i}", "type": "function", "function": {
        "name": "search_crm", "arguments": json.dumps({"query": f"q{i}"})}} for i in range(1000)]
    calls[0]["function"]["arguments"] = json.dumps({"query": "x" * (10 * MIB)})
    doc = {"id": "c", "object": "chat.completion", "model": "test-model", "choices": [
        {"index": 0, "finish_reason": "tool_calls",
         "message": {"role": "assistant", "content": None, "tool_calls": calls}}],
        "usage": {"prompt_tokens": "PLACEHOLDER", "completion_tokens": 7}}
    return json.dumps(doc).replace('"PLACEHOLDER"', "1e400").encode()


def test_a_thousand_huge_tool_calls_are_recorded_bounded_saying_what_was_cut(
    tmp_path: Path, db_url: str, marker: str
) -> None:
    with ChatServer([raw_bytes(thousand_calls()), answer("done")]) as server:
        registry = write_registry(tmp_path, server.base_url)
        save_agent(db_url, registry, "flood")
        status, peak_kib = measured_tick(registry, db_url, marker)
        second = json.dumps(server.requests[1]["body"]) if len(server.requests) > 1 else ""
    assert status == 0
    run = last_run(db_url, "flood")
    assert run["outcome"] == "ok", run["output_tail"]
    assert "not recorded" not in run["output_tail"], run["output_tail"]
    first, last = run["turns"]
    text = json.dumps(first)
    assert len(text.encode()) <= 32768
    cut = " ".join(first["cut"])
    assert "992 of 1000 tool calls" in cut, first["cut"]
    assert "cut]" in first["tool_calls"][0]["arguments"], first["tool_calls"][0]
    assert "Infinity" not in text and first["usage"] == {"completion_tokens": 7}
    assert last["answer"] == "done"
    assert 0 < len(second) < MIB, "what goes back to the model is bounded too"
    assert peak_kib < 256 * 1024, peak_kib


def test_a_reply_nested_50000_deep_is_a_one_line_model_error(
    tmp_path: Path, db_url: str, marker: str
) -> None:
    deep = raw_bytes(b"[" * 50000 + b"]" * 50000)
    with ChatServer([deep, deep]) as server:
        registry = write_registry(tmp_path, server.base_url, http_attempts=2)
        save_agent(db_url, registry, "deep")
        assert tick(registry, db_url, marker).returncode == 0
    run = last_run(db_url, "deep")
    assert run["outcome"] == "failed"
    [line] = reason_lines(run)
    assert "model server: malformed response" in line and "deeper than" in line, line
    [turn] = run["turns"]
    assert "deeper than" in turn["error"]


def test_tool_arguments_nested_5000_deep_are_refused_not_run(
    tmp_path: Path, db_url: str, marker: str
) -> None:
    arguments = '{"query": ' + "[" * 5000 + "]" * 5000 + "}"
    with ChatServer([tool_call("search_crm", arguments), answer("ok")]) as server:
        registry = write_registry(tmp_path, server.base_url)
        save_agent(db_url, registry, "deepargs", tools=["search_crm"])
        assert tick(registry, db_url, marker).returncode == 0
    run = last_run(db_url, "deepargs")
    assert run["outcome"] == "ok", run["output_tail"]
    reason_lines(run)
    [call] = run["turns"][0]["tool_calls"]
    assert call["outcome"] == "arguments nested too deep", call
    assert not (tmp_path / "tool-calls.jsonl").exists()


def test_a_reply_that_trickles_meets_the_requests_deadline(
    tmp_path: Path, db_url: str, marker: str
) -> None:
    with ChatServer([trickle(1000, 1.0)]) as server:
        registry = write_registry(tmp_path, server.base_url, request_timeout="3s",
                                  http_attempts=1)
        save_agent(db_url, registry, "trickle", timeout=40)
        # The whole reply would take 1000 s: without the request's deadline the agent's own
        # watchdog (40 s) would end the run as a timeout, not this failure.
        assert tick(registry, db_url, marker).returncode == 0
    run = last_run(db_url, "trickle")
    assert run["outcome"] == "failed", run["output_tail"]
    [line] = reason_lines(run)
    assert "model server: no whole answer within 3s" in line, line
    [turn] = run["turns"]
    assert "within 3s" in turn["error"]


def test_a_100_mb_reply_is_refused_past_its_bound_and_the_runner_stays_small(
    tmp_path: Path, db_url: str, marker: str
) -> None:
    with ChatServer([huge(100 * MIB)]) as server:
        registry = write_registry(tmp_path, server.base_url, http_attempts=1)
        save_agent(db_url, registry, "huge")
        status, peak_kib = measured_tick(registry, db_url, marker)
    assert status == 0
    run = last_run(db_url, "huge")
    assert run["outcome"] == "failed", run["output_tail"]
    [line] = reason_lines(run)
    assert "model server: a reply larger than 16 MiB" in line, line
    assert peak_kib < 256 * 1024, peak_kib
    [turn] = run["turns"]
    assert "larger than 16 MiB" in turn["error"]
