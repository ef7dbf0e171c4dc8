"""first_run on a kind's first sync, with real ticks: "next_slot" waits for the kind's first
scheduled slot, the default runs an every cadence at once."""

from __future__ import annotations

from pathlib import Path

import psycopg
from test_cli import registry_file, tickq

REGISTRY = """\
[kinds.weekly]
command = ["true"]
every = "7d"
timeout = "30s"
first_run = "next_slot"

[kinds.hourly]
command = ["true"]
every = "1h"
timeout = "30s"
"""


def test_a_kind_with_first_run_next_slot_does_not_run_on_its_first_sync(
    tmp_path: Path, db_url: str, conn: psycopg.Connection
) -> None:
    path = registry_file(tmp_path, REGISTRY)
    result = tickq("tick", "--registry", str(path), "--database-url", db_url)
    assert result.returncode == 0, result.stderr
    ran = dict(conn.execute("SELECT kind, count(*) FROM tickq.job_run GROUP BY kind").fetchall())
    assert ran.get("weekly") is None, ran
    assert ran.get("hourly") == 1, ran  # the default: an every cadence runs at once
    [(waits,)] = conn.execute(
        "SELECT k.due_at = tickq.next_slot(tickq.schedule_of(k), k.created_at)"
        " FROM tickq.job_kind AS k WHERE k.name = 'weekly'").fetchall()
    assert waits


def test_a_first_run_the_database_refuses_names_the_key(tmp_path: Path, db_url: str) -> None:
    path = registry_file(tmp_path, REGISTRY.replace('"next_slot"', '"tomorrow"'))
    result = tickq("check", "--registry", str(path), "--database-url", db_url)
    assert result.returncode == 2, result.stdout + result.stderr
    assert 'kind "weekly", key "first_run": must be "now" or "next_slot"' in result.stderr
