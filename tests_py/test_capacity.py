"""`tickq check` and `tickq simulate` on the three registries of the starvation story, and alerts.

The story (examples/starvation): two always-due urgent kinds filled both slots; the first fix
moved the same starvation one lane down; the real fix has three slots, housekeeping every 15
minutes and cadences that fit. check and simulate must fail on the first two and pass the third.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import psycopg
import pytest

REPO = Path(__file__).resolve().parent.parent
STORY = REPO / "examples" / "starvation"


def tickq(*args: str, url: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tickq.cli", *args, "--database-url", url],
        capture_output=True, text=True, check=False, timeout=120,
    )


def story_registry(name: str) -> str:
    return str(STORY / f"{name}.toml")


def test_each_story_registry_has_45_kinds_in_four_lanes() -> None:
    import tomllib

    for name in ("original", "first_fix", "real_fix"):
        kinds = tomllib.loads((STORY / f"{name}.toml").read_text())["kinds"]
        assert len(kinds) == 45, name
        assert {k.get("priority", "normal") for k in kinds.values()} == {
            "urgent", "high", "normal", "low"
        }, name


@pytest.mark.parametrize(("name", "culprit"), [("original", "urgent"), ("first_fix", "high")])
def test_check_fails_the_story_registries_and_names_the_lane(
    name: str, culprit: str, db_url: str, conn: psycopg.Connection
) -> None:
    done = tickq("check", "--registry", story_registry(name), url=db_url)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "capacity DOES NOT FIT" in done.stdout
    assert f"the {culprit} lane takes the most" in done.stderr
    # the table shows which kinds take the capacity, largest share first
    first_row = done.stdout.splitlines()[2].split()
    assert first_row[1] == culprit and first_row[-1] == "1.0000"
    # and the queue was not touched
    assert conn.execute("SELECT count(*) FROM tickq.job_kind").fetchone() == (0,)


def test_check_passes_the_real_fix(db_url: str) -> None:
    done = tickq("check", "--registry", story_registry("real_fix"), url=db_url)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "capacity fits" in done.stdout and "3 slots less a 25% margin" in done.stdout
    # the worst case too, over a week (weekly kinds) that holds a London clock change
    assert "every schedule once (7d)" in done.stdout
    assert "holds a daylight-saving change of Europe/London" in done.stdout
    assert "worst case fits: no kind waits longer than stale_after 15m" in done.stdout


def test_check_uses_the_queues_history_for_expected_durations(
    tmp_path: Path, db_url: str, conn: psycopg.Connection
) -> None:
    # one kind with a long timeout: too much on paper, fine once runs are known to be short
    path = tmp_path / "registry.toml"
    path.write_text(textwrap.dedent("""
        [settings]
        slots = 1

        [kinds.report]
        command = ["true"]
        every = "5m"
        timeout = "5m"
    """))
    assert tickq("check", "--registry", str(path), url=db_url).returncode == 1
    assert tickq("sync", "--registry", str(path), url=db_url).returncode == 0
    conn.execute("""
        INSERT INTO tickq.job_run (kind, attempt, run_trigger, dispatcher, claimed_at,
                                   finished_at, outcome, duration)
        SELECT 'report', 1, 'schedule', 'd', now() - interval '1 hour', now() - interval '1 hour',
               'ok', interval '10 seconds'
        FROM generate_series(1, 6)
    """)
    done = tickq("check", "--registry", str(path), url=db_url)
    assert done.returncode == 0, done.stdout
    assert "p95 of 6 runs" in done.stdout


@pytest.mark.parametrize("name", ["original", "first_fix", "real_fix"])
def test_simulate_72_hours_of_the_story(name: str, db_url: str) -> None:
    # How fast: bench/check_speed.py (a test asserts what, not how fast).
    done = tickq("simulate", "--registry", story_registry(name), "--hours", "72", url=db_url)
    if name == "real_fix":
        assert done.returncode == 0, done.stdout + done.stderr
        assert "no kind waited longer than 15m" in done.stdout
    else:
        assert done.returncode == 1, done.stdout + done.stderr
        summary = done.stdout.strip().splitlines()[-1]
        assert "starving lanes:" in summary and "low" in summary, summary
        assert "STARVED" in done.stdout


# ---------------------------------------------------------------- alerts


ALERTING = """
[settings]
alert_command = {alert}
alert_after = 2
alert_timeout = "2s"
retry_base = "1s"

[kinds.broken]
command = ["sh", "-c", "echo 'upstream said no' >&2; exit 7"]
every = "1h"
timeout = "10s"
"""


def _write(tmp_path: Path, alert: list[str]) -> Path:
    path = tmp_path / "registry.toml"
    path.write_text(ALERTING.format(alert=json.dumps(alert)))
    return path


def _tick_twice(path: Path, url: str, conn: psycopg.Connection) -> list[str]:
    out = []
    for _ in range(2):
        done = tickq("tick", "--registry", str(path), url=url)
        assert done.returncode == 0, done.stderr
        out.append(done.stdout)
        # make the kind due again for the next tick, as its next slot would
        conn.execute("UPDATE tickq.job_kind SET due_at = now() WHERE name = 'broken'")
    return out


def test_alert_command_gets_the_event_once_with_json_on_stdin(
    tmp_path: Path, db_url: str, conn: psycopg.Connection
) -> None:
    inbox = tmp_path / "alerts.jsonl"
    path = _write(tmp_path, ["sh", "-c", f"cat >> {inbox}; echo >> {inbox}"])
    _tick_twice(path, db_url, conn)
    _tick_twice(path, db_url, conn)  # the streak grows; no second alert
    events = [json.loads(line) for line in inbox.read_text().splitlines() if line.strip()]
    assert [(e["kind"], e["event"]) for e in events] == [("broken", "failing")]
    assert events[0]["failure_streak"] == 2 and events[0]["last_outcome"] == "failed"
    assert "upstream said no" in events[0]["output_tail"]

    # recovery alerts once
    path.write_text(path.read_text().replace(
        """command = ["sh", "-c", "echo 'upstream said no' >&2; exit 7"]""", 'command = ["true"]'))
    _tick_twice(path, db_url, conn)
    events = [json.loads(line) for line in inbox.read_text().splitlines() if line.strip()]
    assert [(e["kind"], e["event"]) for e in events] == [
        ("broken", "failing"), ("broken", "recovered")
    ]


@pytest.mark.parametrize(("alert", "expect"), [
    (["sh", "-c", "sleep 60"], "outcome=timeout"),
    (["sh", "-c", "echo pager down >&2; exit 3"], "outcome=failed"),
])
def test_an_alert_command_that_hangs_or_fails_is_logged_and_never_blocks_the_tick(
    tmp_path: Path, db_url: str, conn: psycopg.Connection, alert: list[str], expect: str
) -> None:
    path = _write(tmp_path, alert)
    outputs = _tick_twice(path, db_url, conn)  # a hung alert left alone would end ok, in 60 s
    failed = [line for line in outputs[1].splitlines() if "alert.failed" in line]
    assert len(failed) == 1 and expect in failed[0], outputs[1]
    # the work itself went on: both runs were reported
    runs = conn.execute("SELECT count(*) FROM tickq.job_run WHERE kind = 'broken'").fetchone()
    assert runs == (2,)


def test_simulate_with_observed_durations_uses_the_queues_history(
    tmp_path: Path, db_url: str, conn: psycopg.Connection
) -> None:
    # Five kinds that each take a whole tick in the worst case share one slot: on timeouts
    # they wait far past stale_after; the queue's history says they take 10 seconds, and then
    # nobody does.
    path = tmp_path / "registry.toml"
    kinds = "".join(
        f'\n[kinds.k{i}]\ncommand = ["true"]\nevery = "5m"\ntimeout = "5m"\n' for i in range(5)
    )
    path.write_text('[settings]\nslots = 1\nhousekeeping_every = "1d"\n' + kinds)
    worst = tickq("simulate", "--registry", str(path), "--hours", "6", url=db_url)
    assert worst.returncode == 1 and "starving lanes:" in worst.stdout, worst.stdout
    assert tickq("sync", "--registry", str(path), url=db_url).returncode == 0
    conn.execute("""
        INSERT INTO tickq.job_run (kind, attempt, run_trigger, dispatcher, claimed_at,
                                   finished_at, outcome, duration)
        SELECT k, 1, 'schedule', 'd', now() - interval '1 hour', now() - interval '1 hour',
               'ok', interval '10 seconds'
        FROM unnest(ARRAY['k0', 'k1', 'k2', 'k3', 'k4']) AS k, generate_series(1, 6)
    """)
    observed = tickq("simulate", "--registry", str(path), "--hours", "6", "--durations",
                     "observed", url=db_url)
    assert observed.returncode == 0, observed.stdout + observed.stderr
    assert "with observed durations" in observed.stdout
