"""Two dispatchers whose registry files disagree on a kind's timeout: a claim's lease covers the
claimer's own watchdog, so the kind is never claimed again while the first copy may still run;
each sync records a fingerprint of the registry and a sync that finds another host's different
registry says so, naming both dispatchers; and a dispatcher never runs a kind whose timeout its
lease does not cover."""

from __future__ import annotations

import datetime as dt
import io
import json
from pathlib import Path

import psycopg
from psycopg.types.json import Jsonb

from tickq.dispatch.tick import Dispatcher
from tickq.log import EventLog
from tickq.registry import load_registry

T0 = dt.datetime(2026, 6, 1, 10, 0, tzinfo=dt.UTC)


def registry_json(timeout: int, dispatcher: str | None) -> dict:
    doc: dict = {
        "settings": {"slots": 3, "lease_margin": 60, "tick": 300},
        "kinds": {"pay": {"command": ["true"], "every": 3600, "timeout": timeout}},
    }
    if dispatcher is not None:
        doc["dispatcher"] = dispatcher
    return doc


def sync(conn: psycopg.Connection, doc: dict, now: dt.datetime) -> list[tuple]:
    return conn.execute("SELECT kind, field, stored_value, registry_value"
                        " FROM tickq.sync_registry(%s, %s)", [Jsonb(doc), now]).fetchall()


def test_the_lease_covers_the_claimers_timeout_so_the_kind_never_runs_twice(
    conn: psycopg.Connection,
) -> None:
    # Host A's registry gives pay 20 minutes; host B's, synced last, 2 minutes.
    sync(conn, registry_json(1200, "host-a:11"), T0)
    sync(conn, registry_json(120, "host-b:22"), T0 + dt.timedelta(seconds=10))
    assert conn.execute("SELECT lease FROM tickq.settings").fetchone() == (dt.timedelta(minutes=3),)

    [(run_id, leased_until)] = conn.execute(
        "SELECT run_id, leased_until FROM tickq.claim_jobs(1, 'host-a:11', %s)",
        [T0 + dt.timedelta(seconds=20)]).fetchall()
    # A's watchdog allows 20 minutes: its lease is 21, not the 3 of the registry synced last.
    assert leased_until == T0 + dt.timedelta(seconds=20, minutes=21)

    # Ten minutes on, A's command may still run: B claims nothing, and the run is still live.
    later = T0 + dt.timedelta(minutes=10)
    assert conn.execute("SELECT * FROM tickq.claim_jobs(3, 'host-b:22', %s) WHERE kind = 'pay'",
                        [later]).fetchall() == []
    assert conn.execute("SELECT outcome::text FROM tickq.job_run WHERE id = %s",
                        [run_id]).fetchone() == ("running",)
    # claim_manual (tickq run) by B is refused too: the kind is busy.
    try:
        conn.execute("SELECT * FROM tickq.claim_manual('pay', 'host-b:22', NULL, %s)", [later])
        raise AssertionError("claim_manual took a kind whose lease is live")
    except psycopg.Error as exc:
        assert exc.sqlstate == "TQ006"


def test_a_sync_over_another_hosts_different_registry_names_both_dispatchers(
    conn: psycopg.Connection,
) -> None:
    assert sync(conn, registry_json(1200, "host-a:11"), T0) == []
    drift = sync(conn, registry_json(120, "host-b:22"), T0 + dt.timedelta(minutes=1))
    conflict = [row for row in drift if row[0] is None and row[1] == "registry"]
    assert len(conflict) == 1, drift
    _kind, _field, stored, incoming = conflict[0]
    assert stored["dispatcher"] == "host-a:11" and incoming["dispatcher"] == "host-b:22"
    assert stored["fingerprint"] != incoming["fingerprint"]
    assert ("pay", "timeout") in {(row[0], row[1]) for row in drift}

    # No conflict: the same host with a new pid and a new file (an edit) once the other host's
    # sync is more than three ticks old; another host with the same registry; a lone host.
    def conflicts(timeout: int, name: str, minutes: int) -> list[tuple]:
        drift = sync(conn, registry_json(timeout, name), T0 + dt.timedelta(minutes=minutes))
        return [row for row in drift if row[1] == "registry"]

    assert conflicts(600, "host-b:23", 30) == []
    assert conflicts(600, "host-c:1", 31) == []
    assert conflicts(1200, "host-a:12", 120) == []
    rows = conn.execute("SELECT name, lease FROM tickq.dispatcher ORDER BY name").fetchall()
    assert ("host-a:12", dt.timedelta(minutes=21)) in rows
    # A script's JSON without a dispatcher records nothing.
    sync(conn, registry_json(60, None), T0 + dt.timedelta(hours=2))
    assert conn.execute("SELECT count(*) FROM tickq.dispatcher").fetchone() == (len(rows),)


def test_a_dispatcher_does_not_run_a_kind_its_lease_does_not_cover(
    tmp_path: Path, db_url: str, conn: psycopg.Connection
) -> None:
    marker = tmp_path / "ran"
    path = tmp_path / "registry.toml"
    path.write_text('[settings]\nlease_margin = "1m"\n\n[kinds.pay]\n'
                    f'command = ["touch", "{marker}"]\nevery = "1h"\ntimeout = "20m"\n')
    a = Dispatcher(db_url, load_registry(path), EventLog("text"), name="host-a:11")
    try:
        # Host B's registry (2 minutes) synced last; host A claims without a sync of its own
        # (so the database knows only B's timeouts) and must not start its 20-minute command.
        sync(conn, registry_json(120, "host-b:22"), T0)
        [claim] = a.claim(1)
        assert claim.kind == "pay" and claim.lease_s is not None and claim.lease_s < 1200
        result = a.execute(claim)
    finally:
        a.close()
    assert result.outcome == "failed"
    assert "not run" in result.output_tail and "longer than the lease" in result.output_tail
    assert not marker.exists()


def test_the_dispatcher_logs_one_conflict_naming_both_hosts(tmp_path: Path, db_url: str) -> None:
    logs = {}
    for host, timeout in (("host-a", "20m"), ("host-b", "2m")):
        folder = tmp_path / host
        folder.mkdir()
        path = folder / "registry.toml"
        path.write_text(f'[kinds.pay]\ncommand = ["true"]\nevery = "1h"\ntimeout = "{timeout}"\n')
        stream = io.StringIO()
        d = Dispatcher(db_url, load_registry(path), EventLog("json", stream), name=f"{host}:1")
        try:
            d.sync()
        finally:
            d.close()
        logs[host] = [json.loads(line) for line in stream.getvalue().splitlines()]
    assert not [e for e in logs["host-a"] if e["event"] == "registry.conflict"]
    [conflict] = [e for e in logs["host-b"] if e["event"] == "registry.conflict"]
    assert (conflict["dispatcher"], conflict["other"]) == ("host-b:1", "host-a:1")
    assert conflict["level"] == "warning"
