"""The slot a run covers, told to its command (TICKQ_SLOT, TICKQ_FIRST_SLOT, TICKQ_SLOTS),
kept on its job_run row and shown by `tickq history`: real ticks, real commands."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import psycopg
from test_cli import registry_file, tickq

# Prints what it was told; fails its first try when asked to (a marker file says it tried). Its
# retry comes a second later, in the same tick, not after the default 30 seconds.
REGISTRY = """\
[settings]
retry_base = "1s"

[kinds.hourly]
command = ["sh", "-c", "env | grep ^TICKQ_; [ ! -e fail-once ] || {{ rm fail-once; exit 1; }}"]
every = "1h"
timeout = "30s"
retries = 1
"""


def told(output: str) -> dict[str, str]:
    return dict(line.split("=", 1) for line in output.splitlines() if line.startswith("TICKQ_"))


def utc(at: datetime) -> str:
    return at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def last_run(conn: psycopg.Connection, trigger: str) -> tuple:
    return conn.execute(
        "SELECT id, output_tail, claimed_at, run_trigger::text, slot_at, first_slot_at,"
        " slots_covered FROM tickq.job_run WHERE kind = 'hourly' AND run_trigger::text = %s"
        " ORDER BY id DESC LIMIT 1",
        [trigger]).fetchone()


def test_a_merged_late_run_a_retry_and_a_manual_run_are_told_their_slots(
    tmp_path: Path, db_url: str, conn: psycopg.Connection
) -> None:
    path = registry_file(tmp_path, REGISTRY.format())
    assert tickq("sync", "--registry", str(path), "--database-url", db_url).returncode == 0
    # Asleep for three hours: due at the slot three hours before this hour's.
    conn.execute("UPDATE tickq.job_kind SET due_at = date_trunc('hour', now()) - interval '3 hours'"
                 " WHERE name = 'hourly'")
    (tmp_path / "fail-once").touch()
    result = tickq("tick", "--registry", str(path), "--database-url", db_url)
    assert result.returncode == 0, result.stderr
    run_id, output, claimed, _, slot_at, first_slot_at, covered = last_run(conn, "schedule")
    hour = claimed.replace(minute=0, second=0, microsecond=0)
    assert told(output)["TICKQ_SLOT"] == utc(hour), output
    assert told(output)["TICKQ_FIRST_SLOT"] == utc(hour - timedelta(hours=3)), output
    assert told(output)["TICKQ_SLOTS"] == "4", output
    assert (slot_at, first_slot_at, covered) == (hour, hour - timedelta(hours=3), 4)

    # The first try failed: its retry (in this tick, or the next) covers the same slots.
    if last_run(conn, "retry") is None:
        conn.execute("UPDATE tickq.job_kind SET due_at = now() WHERE name = 'hourly'")
        result = tickq("tick", "--registry", str(path), "--database-url", db_url)
        assert result.returncode == 0, result.stderr
    retry_id, output, _, _, *slots = last_run(conn, "retry")
    assert retry_id > run_id
    assert told(output)["TICKQ_SLOT"] == utc(hour), output
    assert told(output)["TICKQ_FIRST_SLOT"] == utc(hour - timedelta(hours=3)), output
    assert told(output)["TICKQ_SLOTS"] == "4", output
    assert slots == [hour, hour - timedelta(hours=3), 4]

    history = tickq("history", "hourly", "--json", "--database-url", db_url)
    assert history.returncode == 0, history.stderr
    rows = {r["run_id"]: r for r in json.loads(history.stdout)}
    for shown in (rows[run_id], rows[retry_id]):
        assert datetime.fromisoformat(shown["slot_at"]) == hour
        assert datetime.fromisoformat(shown["first_slot_at"]) == hour - timedelta(hours=3)
        assert shown["slots_covered"] == 4

    table = tickq("history", "hourly", "--database-url", db_url)
    assert "slot (UTC)" in table.stdout and hour.strftime("%Y-%m-%d %H:%M:%S") in table.stdout

    # A run by hand stands for no slot.
    result = tickq("run", "hourly", "--registry", str(path), "--database-url", db_url)
    assert result.returncode == 0, result.stderr
    _, output, _, _, *slots = last_run(conn, "manual")
    assert told(output)["TICKQ_SLOT"] == "", output
    assert told(output)["TICKQ_FIRST_SLOT"] == "", output
    assert told(output)["TICKQ_SLOTS"] == "0", output
    assert slots == [None, None, 0]
