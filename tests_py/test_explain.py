"""`tickq explain KIND` for each state, on a queue built by real ticks: idle until its next slot
(in its zone and UTC), its last outcome and failure streak, disabled, unarmed, paused (by whom,
until, why), running (run, dispatcher, lease) while a real tick holds the only slot, and waiting
behind it (stale or not, its place in the claim order, the run that holds the slot)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from processes import tickq

REPO = Path(__file__).resolve().parent.parent

REGISTRY = """\
[settings]
slots = 3
retry_base = "1s"

[kinds.fine]
command = ["sh", "-c", "echo fine"]
at = ["06:00"]
timezone = "Europe/London"
timeout = "10s"

[kinds.broken]
command = ["sh", "-c", "echo boom; exit 3"]
every = "1h"
timeout = "10s"

[kinds.off]
command = ["sh", "-c", "echo off"]
every = "1h"
timeout = "10s"
enabled = false

[kinds.drop]
command = ["sh", "-c", "echo drop"]
every = "1h"
timeout = "10s"
irreversible = true

[kinds.held]
command = ["sh", "-c", "echo held"]
every = "1h"
timeout = "10s"

[kinds.queued]
command = ["sh", "-c", "echo queued"]
every = "1h"
timeout = "10s"

[kinds.behind]
command = ["sh", "-c", "echo behind"]
every = "1h"
timeout = "10s"
priority = "low"
"""

HOG = """
[kinds.hog]
command = ["sleep", "120"]
every = "1h"
timeout = "5m"
priority = "urgent"
"""


@pytest.fixture(scope="module")
def queue(tmp_path_factory: pytest.TempPathFactory, pg_server_url: str,
          template_db: str) -> Iterator[dict[str, Any]]:
    from tickq import db

    folder = tmp_path_factory.mktemp("explain")
    registry = folder / "registry.toml"
    registry.write_text(REGISTRY)
    name = f"t_explain_{os.getpid()}"
    db.drop_database(pg_server_url, name)
    url = db.create_database(pg_server_url, name, template=template_db)
    assert tickq("sync", "--registry", str(registry), "--database-url", url).returncode == 0
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("UPDATE tickq.job_kind SET due_at = now() - interval '1 minute' "
                     "WHERE name IN ('fine', 'broken', 'held')")
    tick = tickq("tick", "--registry", str(registry), "--database-url", url)
    assert tick.returncode == 0, tick.stderr + tick.stdout
    paused = tickq("pause", "held", "--for", "2h", "--reason", "upstream down",
                   "--registry", str(registry), "--database-url", url)
    assert paused.returncode == 0, paused.stderr
    yield {"url": url, "registry": registry, "folder": folder}
    db.drop_database(pg_server_url, name)


def explain(queue: dict[str, Any], kind: str) -> tuple[dict[str, Any], str]:
    as_json = tickq("explain", kind, "--json", "--database-url", queue["url"])
    assert as_json.returncode == 0, as_json.stderr
    text = tickq("explain", kind, "--database-url", queue["url"])
    assert text.returncode == 0, text.stderr
    return json.loads(as_json.stdout), text.stdout


def test_idle_until_its_next_slot_in_its_zone_and_utc(queue: dict[str, Any]) -> None:
    doc, text = explain(queue, "fine")
    assert doc["state"] == "idle" and doc["last"]["outcome"] == "ok"
    first = text.splitlines()[1]
    assert first.startswith("idle until its next slot: ") and " 06:00:00 Europe/London (" in first
    assert " UTC, in " in first
    assert "failure streak: 0" in text


def test_last_outcome_and_failure_streak(queue: dict[str, Any]) -> None:
    doc, text = explain(queue, "broken")
    assert doc["state"] == "idle" and doc["failure_streak"] == 1
    assert doc["last"]["outcome"] == "failed" and doc["last"]["exit_code"] == 3
    assert "ended failed, exit 3" in text
    assert "failure streak: 1 (alerted as failing from 3)" in text


def test_disabled_and_unarmed(queue: dict[str, Any]) -> None:
    doc, text = explain(queue, "off")
    assert doc["state"] == "disabled" and "enabled = false" in text
    doc, text = explain(queue, "drop")
    assert doc["state"] == "unarmed" and "tickq run drop" in text and "irreversible" in text


def test_paused_says_by_whom_until_when_and_why(queue: dict[str, Any]) -> None:
    doc, text = explain(queue, "held")
    assert doc["state"] == "paused"
    assert doc["pause"]["reason"] == "upstream down" and "@" in doc["pause"]["by"]
    assert doc["pause"]["until"] is not None
    line = text.splitlines()[1]
    assert line.startswith(f"paused by {doc['pause']['by']} until ") and "(in 1h" in line
    assert line.endswith(": upstream down") and "tickq resume held" in text


def test_unknown_kind_is_one_line_and_exit_1(queue: dict[str, Any]) -> None:
    result = tickq("explain", "nope", "--database-url", queue["url"])
    assert result.returncode == 1 and 'no kind "nope"' in result.stderr
    assert "Traceback" not in result.stderr


def _wait_for_lease(url: str, kind: str, proc: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 60
    with psycopg.connect(url, autocommit=True) as conn:
        while time.monotonic() < deadline and proc.poll() is None:
            (run_id,) = conn.execute("SELECT run_id FROM tickq.job_kind WHERE name = %s",
                                     (kind,)).fetchone()
            if run_id is not None:
                return
            time.sleep(0.1)
    raise AssertionError(f"{kind} was never claimed")


def test_running_and_waiting_behind_the_run_that_holds_the_slot(queue: dict[str, Any]) -> None:
    url, registry = queue["url"], queue["folder"] / "hog.toml"
    registry.write_text(REGISTRY.replace("slots = 3", "slots = 1") + HOG)
    assert tickq("sync", "--registry", str(registry), "--database-url", url).returncode == 0
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("UPDATE tickq.job_kind SET due_at = now() - interval '40 minutes' "
                     "WHERE name = 'queued'")
        conn.execute("UPDATE tickq.job_kind SET due_at = now() - interval '1 minute' "
                     "WHERE name IN ('hog', 'behind')")
        # No other kind falls due while the test runs (housekeeping at a quarter hour, 'broken'
        # on the hour): the places below are those of these three alone, whatever the clock.
        conn.execute("UPDATE tickq.job_kind SET due_at = 'infinity' "
                     "WHERE name NOT IN ('queued', 'hog', 'behind')")
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "TICKQ_REGISTRY")}
    env["PYTHONPATH"] = str(REPO / "python_runner")
    proc = subprocess.Popen(
        [sys.executable, "-m", "tickq.cli", "tick", "--registry", str(registry),
         "--database-url", url], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True)
    try:
        # the stale kind is claimed first (aging), so the hog only gets the slot after it
        _wait_for_lease(url, "hog", proc)
        doc, text = explain(queue, "hog")
        run = doc["run"]
        assert doc["state"] == "running"
        assert run["dispatcher"] == f"{socket.gethostname()}:{proc.pid}"
        line = text.splitlines()[1]
        assert line.startswith(f"running: run {run['run_id']} (schedule, attempt 1) on "
                               f"{run['dispatcher']} since ")
        assert "lease until " in text and not run["lease_expired"]

        doc, text = explain(queue, "behind")
        waiting = doc["queue"]
        assert doc["state"] == "waiting" and not doc["stale"]
        assert (waiting["place"], waiting["lane_place"], waiting["slots_free"]) == (1, 1, 0)
        assert [h["run_id"] for h in waiting["holders"]] == [run["run_id"]]
        assert text.splitlines()[1].startswith("waiting: due since ")
        assert f"held by run {run['run_id']} of hog on {run['dispatcher']}" in text
        assert "slots: 0 of 1 free" in text
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=60)


def test_stale_and_its_place_behind_the_others(queue: dict[str, Any]) -> None:
    """A kind due past stale_after, behind one that waited longer: shown STALE, second in line."""
    url = queue["url"]
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("UPDATE tickq.job_kind SET due_at = now() - interval '50 minutes' "
                     "WHERE name = 'behind'")
        conn.execute("UPDATE tickq.job_kind SET due_at = now() - interval '40 minutes' "
                     "WHERE name = 'queued'")
    doc, text = explain(queue, "queued")
    assert doc["state"] == "waiting" and doc["stale"]
    assert (doc["queue"]["place"], doc["queue"]["ahead"]) == (2, ["behind"])
    assert text.splitlines()[1].startswith("STALE: due since ")
    assert "ahead of it: behind" in text
    assert "the free slot(s) go to the 1 kind(s) ahead of it first" in text
