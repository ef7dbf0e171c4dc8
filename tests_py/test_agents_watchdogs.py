"""The watchdogs of an agent's run, end to end (as in test_agents.py): the agent's own stops a
stalled model server and the tool it is running, a tool's own stops a tool that hangs, and no
process of the run is left behind."""

from __future__ import annotations

from pathlib import Path

from agent_harness import (
    a_marker,  # noqa: F401 (the marker fixture)
    last_run,
    marked_processes,
    save_agent,
    tick,
    write_registry,
)
from chat_server import ChatServer, answer, stall, tool_call


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
