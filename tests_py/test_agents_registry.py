"""The registry's [agents] section: what it accepts, every problem named by key, and the one
value rule it shares with the database (the agent. name space, the caps)."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import psycopg
import pytest
from psycopg.types.json import Jsonb

from tickq.db.api import registry as registry_api
from tickq.registry import RegistryError, load_registry, parse_registry

AGENTS = """
[agents]
base_url = "http://127.0.0.1:11434/v1/"
model = "llama3.1"
api_key_env = "OLLAMA_KEY"
max_turns = 4
timeout = "5m"
priority = "high"
retries = 1
deliver = ["bin/post"]

[agents.tools.search_crm]
command = ["bin/search", "--json"]
description = "Search the CRM"
parameters = { type = "object", properties = { query = { type = "string" } }, required = ["query"] }
timeout = "20s"

[agents.tools.weather]
command = ["bin/weather"]
description = "The forecast"
parameters = '{"type": "object", "properties": {"city": {"type": "string"}}}'
"""


def parse(text: str):
    return parse_registry(textwrap.dedent(text), "registry.toml", Path.cwd())


def problems(text: str) -> list[str]:
    with pytest.raises(RegistryError) as info:
        parse(text)
    return [str(p) for p in info.value.problems]


def test_a_valid_section():
    agents = parse(AGENTS).agents
    assert agents is not None
    assert agents.base_url == "http://127.0.0.1:11434/v1"
    assert (agents.model, agents.api_key_env, agents.max_turns, agents.timeout) == (
        "llama3.1", "OLLAMA_KEY", 4, 300)
    assert agents.runner == (sys.executable, "-m", "tickq.agents")
    assert agents.deliver == ("bin/post",)
    search = agents.tools["search_crm"]
    assert search.command == ("bin/search", "--json") and search.timeout == 20
    assert search.parameters == {"type": "object", "required": ["query"],
                                 "properties": {"query": {"type": "string"}}}
    assert agents.tools["weather"].parameters["properties"] == {"city": {"type": "string"}}
    assert agents.tools["weather"].timeout == 30
    # The database gets the lane, the caps and the tool names, and the runner's own bounds to
    # judge; never a command or the endpoint.
    assert parse(AGENTS).to_sync_json()["agents"] == {
        "priority": "high", "max_turns": 4, "timeout": 300, "retries": 1,
        "tools": ["search_crm", "weather"], "tool_timeouts": {"search_crm": 20, "weather": 30},
        "deliver_timeout": 30, "request_timeout": 120, "http_attempts": 4}


def test_no_section_no_agents():
    registry = parse("[settings]\nslots = 2\n")
    assert registry.agents is None and "agents" not in registry.to_sync_json()


def test_every_problem_is_named():
    # (A registry kind named "agent.*" is the database's to refuse: tests_sql/23-agents.sql.)
    found = problems("""
        [agents]
        base_url = "file:///etc/passwd"
        api_key = "sk-live-123"
        api_key_env = "sk-live-123!"
        max_turns = 7
        timeout = "11m"
        runner = "tickq agent exec"
        colour = "blue"

        [agents.tools."Run Shell"]
        command = ["sh"]
        description = "x"

        [agents.tools.search]
        command = "bin/search --all"
        parameters = '{"type": "array"}'
        timeout = "10m"
    """)
    assert found == [
        'registry.toml: key "agents.model": missing; the [agents] section needs model',
        'registry.toml: key "agents.colour": unknown key; expected one of base_url, model, '
        "api_key_env, max_turns, timeout, priority, retries, weight, runner, deliver, "
        "deliver_timeout, request_timeout, http_attempts, tools",
        'registry.toml: key "agents.api_key": never put a key in the registry: set it in an '
        "environment variable and name that variable in agents.api_key_env",
        'registry.toml: key "agents.base_url": must be an http(s) URL such as '
        "\"http://127.0.0.1:11434/v1\", got 'file:///etc/passwd'",
        'registry.toml: key "agents.api_key_env": must be the name of an environment variable '
        "(e.g. OPENAI_API_KEY), not its value; got a string",
        'registry.toml: key "agents.runner": command must be a list of strings (argv), not one '
        'string: write ["bin/x", "--flag"]',
        'registry.toml: key "agents.tools.Run Shell": a tool name is 1-63 characters of a-z 0-9 _ '
        "- starting with a letter or digit",
        'registry.toml: key "agents.tools.search.description": missing; every tool needs '
        "description",
        'registry.toml: key "agents.tools.search.command": command must be a list of strings '
        '(argv), not one string: write ["bin/x", "--flag"]',
        'registry.toml: key "agents.tools.search.parameters": parameters must be a JSON schema '
        'object with "type" = "object"',
    ]
    assert not any("sk-live-123\"" in p or "sk-live-123'" in p for p in found)


def test_the_caps_are_the_databases_to_judge(tmp_path: Path, conn: psycopg.Connection):
    """max_turns 7, an 11-minute watchdog, a tool's 10 minutes: the file's shape is fine, and
    the database refuses each, naming the key the file gives it."""
    path = tmp_path / "registry.toml"
    path.write_text(textwrap.dedent("""
        [agents]
        base_url = "http://127.0.0.1:11434/v1"
        model = "m"
        max_turns = 7
        timeout = "11m"

        [agents.tools.search]
        command = ["bin/search"]
        description = "x"
        timeout = "10m"
    """))
    registry = load_registry(path)
    assert {str(p) for p in registry_api.registry_problems(conn, registry)} == {
        f'{path}: key "agents.max_turns": must be a whole number from 1 to 6, got 7',
        f'{path}: key "agents.timeout": must be a duration from 1s to 10m, got 11m',
        f'{path}: key "agents.tools.search.timeout": must be a duration from 1s to 5m, got 10m',
    }


def test_the_database_refuses_what_the_file_refuses(conn: psycopg.Connection):
    """Caps hold in SQL too: a registry JSON built by hand gets TQ002, as the file would."""
    for section in ({"max_turns": 7}, {"max_turns": 0}, {"timeout": 601}, {"priority": "asap"},
                    {"tools": ["A B"]}):
        with pytest.raises(psycopg.Error) as info:
            conn.execute("SELECT count(*) FROM tickq.sync_registry(%s)",
                         (Jsonb({"settings": {}, "kinds": {}, "agents": section}),))
        assert info.value.sqlstate == "TQ002", section
