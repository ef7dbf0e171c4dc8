"""A result an asynchronous failover lost is applied, not recorded `lost`: each tick keeps what it
reported (in its ledger folder, for as long as a lease), and a later tick on the same host that
finds such a run still `running`, leased as it was to the dispatcher that reported it and held
by no process of the host, reports it again (as the spool replays a result: `report_late_run`).

The failover is real (failover_pair.py's primary and asynchronous standby of Debian's PostgreSQL
15); the guards are tested on the embedded server with kept reports written where a tick keeps
them: a run a live process of the host holds, and a run whose id a new claim reissued, are
left alone."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime, timedelta
from hashlib import sha256
from pathlib import Path

import psycopg
from failover_pair import (
    build_pair,
    cut_replication,
    folder,
    replayed,
    tick,
    tickq_cli,
    wait_for,
    write_registry,
)
from processes import tickq

from tickq.db.api.tick import RunReport
from tickq.host.ledger import Ledger, start_time

__all__ = ["folder"]  # the fixture, used by name


def test_a_report_an_asynchronous_failover_lost_is_applied_by_the_next_tick(
    folder: Path,
) -> None:
    pair = build_pair(folder, synchronous=False)
    registry = write_registry(folder)
    first = tick(registry, pair.url, folder / "run")
    wait_for("the command to start", lambda: (folder / "started").exists(), 60)
    wait_for("the standby to replay the claim", lambda: replayed(pair), 30)
    cut_replication(pair)
    (folder / "go").touch()
    out, _ = first.communicate(timeout=60)
    assert first.returncode == 0 and "run.finished kind=work" in out, out

    pair.primary.stop("immediate")  # the report never reached the standby
    pair.standby.promote()
    with psycopg.connect(pair.standby.admin_url) as conn:
        [(run_id, outcome)] = conn.execute("SELECT id, outcome::text FROM tickq.job_run"
                                           " WHERE kind = 'work'").fetchall()
    assert outcome == "running"

    after = tickq_cli("tick", "--registry", str(registry), url=pair.url, run_dir=folder / "run")

    assert after.returncode == 0, after
    assert "run.report_restored" in after.stdout, after.stdout
    with psycopg.connect(pair.standby.admin_url) as conn:
        runs = conn.execute("SELECT id, outcome::text, output_tail FROM tickq.job_run"
                            " WHERE kind = 'work'").fetchall()
        kind = conn.execute("SELECT run_id, next_trigger::text, failure_streak FROM"
                            " tickq.job_kind WHERE name = 'work'").fetchone()
    assert runs == [(run_id, "ok", "finished\n")], (runs, after.stdout)
    assert kind == (None, "schedule", 0)
    assert (folder / "runs.log").read_text().count("start") == 1  # nothing ran twice
    check = tickq_cli("status", "--check", url=pair.url, run_dir=folder / "run")
    assert check.returncode == 0, check


# ------------------------------------------------------------------ the guards, without a failover


def _claimed(db_url: str, holder: str) -> tuple[int, datetime]:
    with psycopg.connect(db_url, autocommit=True) as conn:
        conn.execute("UPDATE tickq.job_kind SET due_at = CASE WHEN name = 'work' THEN now()"
                     " ELSE 'infinity' END")
        [(run_id, until)] = conn.execute("SELECT run_id, leased_until FROM"
                                         " tickq.claim_jobs(1, %s)", (holder,)).fetchall()
    return run_id, until


def _keep(ledger: Path, db_url: str, run_id: int, holder: str, lease: datetime) -> Path:
    """A report kept as a tick keeps it, for a run `holder` reported `ok`."""
    report = RunReport(run_id, holder, "ok", 0, "done\n", 1.5)
    kept = {**report._asdict(), "kind": "work", "kept": {
        "until": (datetime.now(UTC) + timedelta(minutes=5)).timestamp(),
        "lease": lease.isoformat(), "queue": sha256(db_url.encode()).hexdigest()}}
    folder = ledger / "reported"
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    path = folder / f"{run_id}.json"
    path.write_text(json.dumps(kept))
    return path


def _outcome(db_url: str, run_id: int) -> str:
    with psycopg.connect(db_url) as conn:
        return conn.execute("SELECT outcome::text FROM tickq.job_run WHERE id = %s",
                            (run_id,)).fetchone()[0]


def test_a_kept_report_is_not_applied_while_a_process_of_the_host_holds_the_run(
    db_url: str, tmp_path: Path, own_ledger_folder: Path
) -> None:
    registry = tmp_path / "registry.toml"
    registry.write_text('[kinds.work]\ncommand = ["true"]\nevery = "1h"\ntimeout = "1m"\n')
    assert tickq("sync", "--registry", str(registry), "--database-url", db_url).returncode == 0
    holder = f"{Ledger().host}:{os.getpid()}"
    run_id, lease = _claimed(db_url, holder)
    kept = _keep(own_ledger_folder, db_url, run_id, holder, lease)
    # This process runs the run's command: its entry in the host's ledger, its dispatcher alive.
    (own_ledger_folder / "99999.json").write_text(json.dumps({
        "pgid": 99999, "leader_started": None, "host": Ledger().host, "kind": "work",
        "run_id": run_id, "dispatcher": holder, "dispatcher_pid": os.getpid(),
        "dispatcher_started": start_time(os.getpid())}))

    held = tickq("tick", "--registry", str(registry), "--database-url", db_url)

    assert held.returncode == 0, held.stderr
    assert _outcome(db_url, run_id) == "running" and kept.exists()
    (own_ledger_folder / "99999.json").unlink()  # its command ended

    freed = tickq("tick", "--registry", str(registry), "--database-url", db_url)

    assert freed.returncode == 0, freed.stderr
    assert "run.report_restored" in freed.stdout, freed.stdout
    assert _outcome(db_url, run_id) == "ok" and not kept.exists()


def test_a_kept_report_of_a_run_id_claimed_again_is_dropped(
    db_url: str, tmp_path: Path, own_ledger_folder: Path
) -> None:
    registry = tmp_path / "registry.toml"
    registry.write_text('[kinds.work]\ncommand = ["true"]\nevery = "1h"\ntimeout = "1m"\n')
    assert tickq("sync", "--registry", str(registry), "--database-url", db_url).returncode == 0
    holder = "gone-host:1"
    run_id, lease = _claimed(db_url, holder)
    # The report kept names the same run id, but a lease the database never gave it.
    kept = _keep(own_ledger_folder, db_url, run_id, holder, lease - timedelta(hours=1))

    done = tickq("tick", "--registry", str(registry), "--database-url", db_url)

    assert done.returncode == 0, done.stderr
    assert "run.report_restored" not in done.stdout
    assert _outcome(db_url, run_id) == "running" and not kept.exists()
