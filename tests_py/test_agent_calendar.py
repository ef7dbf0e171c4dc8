"""`tickq agent add|edit` with the calendar fields and cron strings kinds take: real CLI
processes, the schedule judged by the one parser kinds use (tickq.parse_schedule)."""

from __future__ import annotations

import re
from pathlib import Path

import psycopg
from test_agents import write_registry
from test_agents_cli import tickq


def test_an_agent_on_month_ends_and_one_on_a_cron_string(tmp_path: Path, db_url: str) -> None:
    write_registry(tmp_path, "http://127.0.0.1:9/v1")
    added = tickq(tmp_path, db_url, "add", "month-close", "--prompt", "Close the month.",
                  "--at", "07:00", "--days", "-1", "--months", "jan,jul",
                  "--timezone", "Europe/London")
    assert added.returncode == 0, added.stderr
    runs = re.findall(r"^  \w{3} (\d{4}-\d\d-\d\d) 07:00 Europe/London", added.stdout, re.M)
    assert runs and all(day[5:] in ("01-31", "07-31") for day in runs), added.stdout

    edited = tickq(tmp_path, db_url, "edit", "month-close", "--on", "last fri")
    assert edited.returncode == 0, edited.stderr
    cron = tickq(tmp_path, db_url, "add", "office", "--prompt", "Triage.",
                 "--cron", "*/15 9-17 * * mon-fri", "--timezone", "America/New_York")
    assert cron.returncode == 0, cron.stderr
    assert 'cron "*/15 9-17 * * mon-fri"' in cron.stdout, cron.stdout
    with psycopg.connect(db_url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT name, on_days, days, months, cron, timezone FROM tickq.job_kind"
            " WHERE name LIKE 'agent.%' ORDER BY name").fetchall()
    assert rows == [("agent.month-close", [95], [-1], [1, 7], None, "Europe/London"),
                    ("agent.office", None, None, None, "*/15 9-17 * * mon-fri",
                     "America/New_York")], rows

    bad = tickq(tmp_path, db_url, "add", "bad", "--prompt", "x", "--cron", "61 * * * *")
    assert bad.returncode == 2, bad.stdout + bad.stderr
    assert bad.stderr.startswith("tickq: agent 'bad': cron: "), bad.stderr
