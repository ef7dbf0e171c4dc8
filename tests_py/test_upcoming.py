"""`tickq upcoming` and the status page's Upcoming table list only runs that will happen: an
unarmed irreversible kind and a paused kind are shown held, with why, never as due; a kind
paused until a time runs first when its pause ends; agents' runs are listed; a list cut at its
limit says how many more the window holds. The page draws no wait for a paused kind.

Real `tickq` subprocesses against a real PostgreSQL (tests_py/conftest.py).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from datetime import UTC, datetime, timedelta
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import psycopg
import pytest

REPO = Path(__file__).resolve().parent.parent

REGISTRY = """\
[settings]
slots = 2
stale_after = "15m"

[kinds.every5]
command = ["true"]
every = "5m"
timeout = "30s"

[kinds.payout]
command = ["true"]
every = "1h"
timeout = "30s"
irreversible = true

[kinds.held]
command = ["true"]
every = "1h"
timeout = "30s"

[kinds.later]
command = ["true"]
every = "1h"
timeout = "30s"

[agents]
base_url = "http://127.0.0.1:9/v1"
model = "m"
priority = "low"
"""


def tickq(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("DATABASE_URL", "TICKQ_REGISTRY", "TICKQ_LOG_FORMAT", "COLUMNS")}
    env["PYTHONPATH"] = str(REPO / "python_runner")
    return subprocess.run([sys.executable, "-m", "tickq.cli", *args], env=env, input=stdin,
                          capture_output=True, text=True, timeout=90)


@pytest.fixture
def queue(tmp_path: Path, db_url: str) -> dict[str, Any]:
    """A queue with a 5-minute kind, an unarmed hourly payout, a kind paused until resumed, one
    paused for three hours and an hourly agent; every due time moved an hour into the past, so
    each kind is due now (and would be stale, were it waiting)."""
    registry = tmp_path / "registry.toml"
    registry.write_text(textwrap.dedent(REGISTRY))
    base = ["--registry", str(registry), "--database-url", db_url]
    for args in (("sync",), ("pause", "held", "--reason", "maintenance"),
                 ("pause", "later", "--for", "3h")):
        done = tickq(*args, *base)
        assert done.returncode == 0, done.stderr
    done = tickq("agent", "add", "brief", "--prompt", "-", "--every", "1h", *base,
                 stdin="Summarise the day")
    assert done.returncode == 0, done.stderr
    with psycopg.connect(db_url, autocommit=True) as conn:
        conn.execute("UPDATE tickq.job_kind SET due_at = now() - interval '1 hour' "
                     "WHERE name <> 'tickq.housekeeping'")
        until = conn.execute(
            "SELECT paused_until FROM tickq.job_kind WHERE name = 'later'").fetchone()
    assert until is not None
    return {"base": base, "url": db_url, "tmp": tmp_path, "later_until": until[0]}


def upcoming_json(queue: dict[str, Any], *args: str) -> list[dict[str, Any]]:
    done = tickq("upcoming", "--json", *args, *queue["base"])
    assert done.returncode == 0, done.stderr
    rows: list[dict[str, Any]] = json.loads(done.stdout)
    return rows


def test_unarmed_and_paused_kinds_are_held_not_due(queue: dict[str, Any]) -> None:
    rows = upcoming_json(queue, "--limit", "500")
    timed = [r for r in rows if r["due_at"] is not None]
    assert not [r for r in timed if r["kind"] in ("payout", "held")]
    held = {r["kind"]: r["held"] for r in rows if r["due_at"] is None}
    assert held == {"payout": "unarmed", "held": "paused"}
    # The held rows come after every run that will happen.
    assert [r["due_at"] is None for r in rows] == sorted(r["due_at"] is None for r in rows)


def test_a_pause_with_an_end_starts_the_kinds_runs_there(queue: dict[str, Any]) -> None:
    later = [r for r in upcoming_json(queue, "--limit", "500") if r["kind"] == "later"]
    first = datetime.fromisoformat(later[0]["due_at"])
    assert first == queue["later_until"]
    assert later[0]["held"] == "paused"
    assert all(datetime.fromisoformat(r["due_at"]) > first for r in later[1:])


def test_agents_next_runs_are_listed(queue: dict[str, Any]) -> None:
    rows = upcoming_json(queue, "--hours", "3")
    agent = [r for r in rows if r["kind"] == "agent.brief"]
    assert len(agent) >= 3, rows  # due now, then hourly
    assert agent[0]["priority"] == "low"


def test_a_daily_agent_is_not_crowded_out_by_a_5_minute_kind(queue: dict[str, Any]) -> None:
    at = (datetime.now(UTC) + timedelta(hours=12)).strftime("%H:%M")
    done = tickq("agent", "add", "nightly", "--prompt", "-", "--at", at, "--timezone", "UTC",
                 *queue["base"], stdin="Summarise the night")
    assert done.returncode == 0, done.stderr
    done = tickq("upcoming", *queue["base"])  # the default limit, 50 rows
    assert done.returncode == 0, done.stderr
    assert [line for line in done.stdout.splitlines() if "agent.nightly" in line], done.stdout


def test_the_table_names_held_kinds_and_how_many_more(queue: dict[str, Any]) -> None:
    done = tickq("upcoming", "--limit", "5", *queue["base"])
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    payout = [line for line in lines if " payout " in f" {line} "]
    assert payout and "unarmed" in payout[0] and "tickq run payout" in payout[0]
    held = [line for line in lines if " held " in f" {line} "]
    assert held and "paused until resumed" in held[0]
    rows = upcoming_json(queue, "--limit", "5")
    timed = [r for r in rows if r["due_at"] is not None]
    # The first five, and each kind's next run past them (every5 fills the first five).
    assert {r["kind"] for r in timed} == {"every5", "later", "agent.brief", "tickq.housekeeping"}
    total = rows[0]["total"]
    assert total > 250  # every5 alone runs 288 times a day
    assert f"{total - len(timed)} more in the next 24 hours" in done.stdout


class Upcoming(HTMLParser):
    """The rows of the page's Upcoming table and the text after it."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[list[str]] = []
        self.note = ""
        self._in, self._cells, self._after = False, None, False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table" and ("id", "upcoming") in attrs:
            self._in = True
        elif self._in and tag == "tr":
            self._cells = []
        elif self._in and tag == "td" and self._cells is not None:
            self._cells.append("")
        elif tag == "p" and ("id", "upcoming-more") in attrs:
            self._after = True

    def handle_endtag(self, tag: str) -> None:
        if self._in and tag == "table":
            self._in = False
        elif self._in and tag == "tr" and self._cells:
            self.rows.append(self._cells)
            self._cells = None
        elif tag == "p":
            self._after = False

    def handle_data(self, data: str) -> None:
        if self._in and self._cells:
            self._cells[-1] += data
        elif self._after:
            self.note += data


def page(queue: dict[str, Any]) -> str:
    out = queue["tmp"] / "status.html"
    done = tickq("report", "--html", str(out), *queue["base"])
    assert done.returncode == 0, done.stderr
    return out.read_text()


def test_the_page_shows_held_kinds_and_says_how_many_more(queue: dict[str, Any]) -> None:
    html = page(queue)
    table = Upcoming()
    table.feed(html)
    by_kind: dict[str, list[list[str]]] = {}
    for cells in table.rows:
        by_kind.setdefault(cells[1], []).append(cells)
    assert [c[0] for c in by_kind["payout"]] == ["-"]
    assert "unarmed" in by_kind["payout"][0][-1]
    assert [c[0] for c in by_kind["held"]] == ["-"]
    assert "paused until resumed" in by_kind["held"][0][-1]
    with psycopg.connect(queue["url"]) as conn:
        row = conn.execute("SELECT total FROM tickq.upcoming_at(24, 50) LIMIT 1").fetchone()
    assert row is not None and row[0] > 50  # 288 runs of every5 alone
    shown = len([c for c in table.rows if c[0] != "-"])
    assert shown == 10  # the first ten open; the rest of the list folded below it
    assert "agent.brief" in html[html.index('id="upcoming-rest"'):]
    note = " ".join(table.note.split())
    assert re.search(rf"\b{row[0] - shown} more runs in the next 24 hours\b", note), note


def test_the_page_draws_no_wait_for_a_paused_or_unarmed_kind(queue: dict[str, Any]) -> None:
    html = page(queue)
    for kind in ("held", "later", "payout"):
        group = re.search(rf'<g class="kind-row" data-kind="{kind}".*?</g>', html, re.S)
        assert group is not None, kind
        assert "wait open" not in group.group(0), kind
        assert "stale-marker" not in group.group(0), kind
    every5 = re.search(r'<g class="kind-row" data-kind="every5".*?</g>', html, re.S)
    assert every5 is not None and "wait open" in every5.group(0)  # the test can see a wait


def test_a_limit_that_covers_the_window_says_nothing_more(queue: dict[str, Any]) -> None:
    done = tickq("upcoming", "--limit", "1000", *queue["base"])
    assert done.returncode == 0, done.stderr
    assert "more in the next" not in done.stdout
