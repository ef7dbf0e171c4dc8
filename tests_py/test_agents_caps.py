"""A registry that says nothing about agents leaves the agents' caps alone: two dispatchers,
one registry with an [agents] section and one without, sync in turn through real `tickq sync`
subprocesses against a real PostgreSQL."""

from __future__ import annotations

from pathlib import Path

import psycopg
from test_cli import registry_file, tickq

KIND = """\
[kinds.a]
command = ["true"]
every = "5m"
timeout = "30s"
"""

AGENTS = """\

[agents]
base_url = "http://127.0.0.1:9/v1"
model = "m"
max_turns = 3
timeout = "2m"

[agents.tools.search]
command = ["true"]
description = "search"
"""


def caps(db_url: str) -> tuple:
    with psycopg.connect(db_url) as conn:
        return conn.execute("SELECT max_turns, extract(epoch FROM max_timeout)::int, tools "
                            "FROM tickq.agent_settings").fetchone()


def test_a_sync_without_an_agents_section_keeps_the_caps(tmp_path: Path, db_url: str) -> None:
    with_agents, without = tmp_path / "one", tmp_path / "two"
    with_agents.mkdir()
    without.mkdir()
    first = registry_file(with_agents, KIND + AGENTS)
    second = registry_file(without, KIND)
    done = tickq("sync", "--registry", str(first), "--database-url", db_url)
    assert done.returncode == 0, done.stderr
    assert caps(db_url) == (3, 120, ["search"])
    done = tickq("sync", "--registry", str(second), "--database-url", db_url)
    assert done.returncode == 0, done.stderr
    assert caps(db_url) == (3, 120, ["search"])
