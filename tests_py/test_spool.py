"""The spool as untrusted input: `tickq tick` as a real subprocess on a spool folder holding
hostile and corrupt files beside a real kept result. No file stops the others or the tick; each
that is no result is moved aside into spool/rejected/ with a line naming it and why; a FIFO
never holds the tick; a folder that is not this user's alone is refused with a warning (and in
`status --check`), never silently; a transient database error leaves the file for the next try.
"""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

import psycopg
import pytest
from test_cli import registry_file, tickq

from tickq import db
from tickq.db.api import tick as api

REGISTRY = """\
[settings]
slots = 2
db_lock_timeout = "5s"

[kinds.pay]
command = ["true"]
every = "1h"
timeout = "30s"

[kinds.hello]
command = ["sh", "-c", "echo hello ran"]
every = "1h"
timeout = "30s"
"""


def setup_queue(tmp_path: Path, db_url: str) -> tuple[Path, int]:
    """A synced registry and a run of `pay` claimed by a dispatcher that died in an outage."""
    registry = registry_file(tmp_path, REGISTRY)
    synced = tickq("sync", "--registry", str(registry), "--database-url", db_url)
    assert synced.returncode == 0, synced.stderr
    with db.connect(db_url) as conn:
        claim = api.claim_manual(conn, "pay", "gone-host:1")
        conn.execute("UPDATE tickq.job_kind SET due_at = now() + interval '1 day'"
                     " WHERE name = 'tickq.housekeeping'")
    return registry, claim.run_id


def kept(run_id: int, **changes: object) -> str:
    result = {"run_id": run_id, "dispatcher": "gone-host:1", "outcome": "ok", "exit_code": 0,
              "output_tail": "paid\n", "duration": 0.5, "kind": "pay"}
    return json.dumps({**result, **changes})


def spool_folder(ledger: Path) -> Path:
    ledger.mkdir(mode=0o700, exist_ok=True)
    folder = ledger / "spool"
    folder.mkdir(mode=0o700)
    return folder


def tick(registry: Path, db_url: str, timeout: float = 60) -> str:
    done = tickq("tick", "--registry", str(registry), "--database-url", db_url,
                 timeout=timeout)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout + done.stderr


def runs(db_url: str) -> dict[str, str]:
    with psycopg.connect(db_url) as conn:
        return dict(conn.execute("SELECT kind, outcome::text FROM tickq.job_run").fetchall())


def test_bad_files_are_moved_aside_and_the_good_one_beside_them_is_replayed(
    tmp_path: Path, db_url: str, own_ledger_folder: Path
) -> None:
    registry, run_id = setup_queue(tmp_path, db_url)
    folder = spool_folder(own_ledger_folder)
    (folder / f"{run_id}.json").write_text(kept(run_id))
    bad = {
        "11.json": kept(11)[:40],  # tampered: cut short
        "12.json": kept(12).replace('"run_id": 12', '"run_id": 1e999'),
        "13.json": kept(13, outcome="lost"),
        "14.json": kept(14).replace('"duration": 0.5', '"duration": NaN'),
        "15.json": kept(15, exit_code="0"),
        "16.json": "[1, 2]",
        "17.json": kept(99),  # not the run its name gives
        "18.json": kept(18).replace('"run_id": 18', f'"run_id": {2**63}'),
        "19.json": kept(19, output_tail="x" * 2_000_000),
        "20.json": b"\xff\xfe not text",
        "notes.json": kept(21),
        "23.json": kept(23, output_tail="a\u0000b"),
        "24.json": kept(24, kind=["pay"]),
    }
    for name, text in bad.items():
        path = folder / name
        path.write_bytes(text if isinstance(text, bytes) else text.encode())
    (folder / "22.json").symlink_to(folder / f"{run_id}.json")
    bad["22.json"] = ""

    log = tick(registry, db_url)

    assert runs(db_url) == {"pay": "ok", "hello": "ok"}, log
    assert "run.late_report" in log
    assert sorted(os.listdir(folder)) == ["rejected"], log
    assert sorted(os.listdir(folder / "rejected")) == sorted(bad)
    rejected = [line for line in log.splitlines() if "spool.rejected" in line]
    assert len(rejected) == len(bad), log
    for name in bad:
        assert any(str(folder / name) in line for line in rejected), (name, log)
    assert "1e999" in log or "inf" in log

    checked = tickq("status", "--check", "--registry", str(registry), "--database-url", db_url)
    assert f"{len(bad)} file(s) in {folder / 'rejected'}" in checked.stdout, checked.stdout


def test_a_fifo_named_like_a_spool_file_does_not_hold_the_tick(
    tmp_path: Path, db_url: str, own_ledger_folder: Path
) -> None:
    registry, run_id = setup_queue(tmp_path, db_url)
    folder = spool_folder(own_ledger_folder)
    os.mkfifo(folder / "7.json")
    (folder / f"{run_id}.json").write_text(kept(run_id))
    log = tick(registry, db_url, timeout=30)  # a tick held by the FIFO would time out
    assert runs(db_url) == {"pay": "ok", "hello": "ok"}, log
    assert "FIFO" in log and str(folder / "7.json") in log
    assert os.listdir(folder / "rejected") == ["7.json"]


def _refuse(kind: str, folder: Path, elsewhere: Path) -> str:
    if kind == "mode 0750":
        folder.chmod(0o750)
        return "0750"
    if kind == "another user's":
        os.chown(folder, 65534, 65534)
        return "uid 65534"
    folder.rename(elsewhere)
    folder.symlink_to(elsewhere)
    return "symlink"


@pytest.mark.parametrize("kind", ["mode 0750", "another user's", "a symlink"])
def test_a_spool_folder_not_private_is_refused_with_a_warning(
    tmp_path: Path, db_url: str, own_ledger_folder: Path, kind: str
) -> None:
    if kind == "another user's" and os.getuid() != 0:
        pytest.skip("only root can give a folder to another user")
    registry, run_id = setup_queue(tmp_path, db_url)
    folder = spool_folder(own_ledger_folder)
    (folder / f"{run_id}.json").write_text(kept(run_id))
    why = _refuse(kind, folder, tmp_path / "elsewhere")

    log = tick(registry, db_url)

    refused = [line for line in log.splitlines() if "spool.refused" in line]
    assert len(refused) == 1, log
    assert str(folder) in refused[0] and why in refused[0], log
    assert runs(db_url) == {"pay": "running", "hello": "ok"}, "not reported from such a folder"
    assert (folder / f"{run_id}.json").exists()
    checked = tickq("status", "--check", "--registry", str(registry), "--database-url", db_url)
    assert checked.returncode == 1
    assert any(line.startswith("PROBLEM spool:") and why in line
               for line in checked.stdout.splitlines()), checked.stdout


def test_a_deadlock_leaves_the_result_for_the_next_tick(
    tmp_path: Path, db_url: str, own_ledger_folder: Path
) -> None:
    """The replay locks the kind, then the run; a session holding the run and then asking for
    the kind makes a real deadlock, which PostgreSQL breaks by failing the replay (40P01)."""
    registry, run_id = setup_queue(tmp_path, db_url)
    folder = spool_folder(own_ledger_folder)
    (folder / f"{run_id}.json").write_text(kept(run_id))
    other = psycopg.connect(db_url)
    other.execute("SET deadlock_timeout = '60s'")  # the replay's own check finds the cycle
    other.execute("BEGIN")
    other.execute("SELECT FROM tickq.job_run WHERE id = %s FOR UPDATE", [run_id])
    errors: list[BaseException] = []

    def close_the_cycle() -> None:
        try:
            with psycopg.connect(db_url, autocommit=True) as watch:
                for _ in range(500):
                    waiting = watch.execute(
                        "SELECT count(*) FROM pg_locks WHERE NOT granted").fetchone()[0]
                    if waiting:
                        break
                    time.sleep(0.01)
            other.execute("SELECT FROM tickq.job_kind WHERE name = 'pay' FOR UPDATE")
            other.execute("COMMIT")
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            errors.append(exc)

    thread = threading.Thread(target=close_the_cycle)
    thread.start()
    log = tick(registry, db_url)
    thread.join(timeout=30)
    other.close()
    assert not errors, errors
    assert "40P01" in log, log
    assert (folder / f"{run_id}.json").exists(), "a transient error leaves the file"
    assert runs(db_url) == {"pay": "running", "hello": "ok"}

    log = tick(registry, db_url)
    assert "run.late_report" in log
    assert runs(db_url)["pay"] == "ok"
    assert not (folder / f"{run_id}.json").exists()


def test_a_lock_timeout_leaves_the_result_and_the_tick_goes_on(
    tmp_path: Path, db_url: str, own_ledger_folder: Path
) -> None:
    registry, run_id = setup_queue(tmp_path, db_url)
    registry.write_text(REGISTRY.replace('db_lock_timeout = "5s"', 'db_lock_timeout = "1s"'))
    folder = spool_folder(own_ledger_folder)
    (folder / f"{run_id}.json").write_text(kept(run_id))
    with psycopg.connect(db_url) as other:  # a person's psql, left in a transaction
        other.execute("SELECT FROM tickq.job_run WHERE id = %s FOR UPDATE", [run_id])
        log = tick(registry, db_url)
    assert "run.late_report_deferred" in log, log
    assert runs(db_url) == {"pay": "running", "hello": "ok"}
    assert (folder / f"{run_id}.json").exists()
    log = tick(registry, db_url)
    assert runs(db_url)["pay"] == "ok", log
