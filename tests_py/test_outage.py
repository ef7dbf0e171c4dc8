"""The database goes away while commands run: on a PostgreSQL server of this test's own (the
session's shared server is never stopped), stopped and started again for real.

- A result that cannot be reported within the reconnect budget is kept in the host's spool
  (the ledger folder, mode 0600, fsync'd) and reported by the next tick: a success stays a
  success, even after the lease turned the run into `lost`, and the retry `lost` scheduled is
  undone.
- A claim that fails while the database is away does not end claiming for the rest of the tick.
"""

from __future__ import annotations

import io
import shutil
import stat
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from tickq import db
from tickq.db import embedded
from tickq.db.errors import DatabaseUnavailable
from tickq.dispatch.tick import Dispatcher
from tickq.host.ledger import Ledger
from tickq.log import EventLog
from tickq.registry import load_registry


class Server:
    """An embedded PostgreSQL of this module's own, with a migrated template database."""

    def __init__(self) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="tickq-outage-"))
        self.folder.chmod(0o711)  # as root, the server's own user must pass this folder
        self.pgdata = self.folder / "pg"
        self.server_url = embedded.ensure_server(self.pgdata)
        template = db.create_database(self.server_url, "outage_template")
        with db.connect(template) as conn:
            db.migrate(conn)
        self.url = ""

    def fresh_database(self) -> None:
        name = f"outage_{uuid.uuid4().hex[:12]}"
        self.url = db.create_database(self.server_url, name, template="outage_template")

    def stop(self) -> None:
        assert embedded.stop_server(self.pgdata)

    def start(self) -> None:
        embedded.ensure_server(self.pgdata)

    def close(self) -> None:
        embedded.stop_server(self.pgdata)
        shutil.rmtree(self.folder, ignore_errors=True)


@pytest.fixture(scope="module")
def own_server() -> Iterator[Server]:
    s = Server()
    try:
        yield s
    finally:
        s.close()


@pytest.fixture
def server(own_server: Server) -> Server:
    own_server.start()  # a no-op unless a test left it stopped
    own_server.fresh_database()
    return own_server


def wait_for(what: str, check, seconds: float = 20.0):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


def registry_file(folder: Path, kinds: str) -> Path:
    path = folder / "registry.toml"
    path.write_text('[settings]\nslots = 2\nretry_base = "1s"\n\n' + kinds)
    return path


def dispatcher(server: Server, registry: Path, ledger: Path, log: io.StringIO) -> Dispatcher:
    return Dispatcher(server.url, load_registry(registry), EventLog("text", log),
                      report_attempts=2, reconnect_delay=0.2, refill_every=0.3,
                      ledger=Ledger(ledger), grace=1.0)


def test_a_success_reported_after_a_long_outage_stays_a_success(
    tmp_path: Path, server: Server, own_ledger_folder: Path
) -> None:
    started, go = tmp_path / "started", tmp_path / "go"
    registry = registry_file(tmp_path, f"""\
[kinds.pay]
command = ["sh", "-c", "touch {started}; while [ ! -e {go} ]; do sleep 0.02; done; echo paid"]
every = "1h"
timeout = "30s"
retries = 3
""")
    log = io.StringIO()
    first = dispatcher(server, registry, own_ledger_folder, log)
    first.migrate()
    first.sync()
    with db.connect(server.url) as conn:
        conn.execute("UPDATE tickq.job_kind SET due_at = 'infinity'"
                     " WHERE name = 'tickq.housekeeping'")
    failed: list[BaseException] = []

    def tick() -> None:
        try:
            first.tick()
        except DatabaseUnavailable as exc:  # after the report, nothing more can be claimed
            failed.append(exc)

    thread = threading.Thread(target=tick)
    thread.start()
    wait_for("the command to start", started.exists)
    server.stop()  # for longer than the reconnect budget (2 attempts, 0.2 s apart)
    go.touch()  # the command ends while the database is away
    thread.join(timeout=60)
    assert not thread.is_alive()
    first.close()
    spooled = list((own_ledger_folder / "spool").glob("*.json"))
    assert len(spooled) == 1, log.getvalue()
    assert stat.S_IMODE(spooled[0].stat().st_mode) == 0o600
    assert "run.spooled" in log.getvalue()

    server.start()
    with db.connect(server.url) as conn:
        # The lease expires while the database was away (a moved clock stands in for a lease
        # margin's wait): the run turns `lost`, a failure, and a retry is scheduled.
        lost = conn.execute("SELECT kind FROM tickq.expire_leases(now() + interval '1 day')")
        assert lost.fetchall() == [("pay",)]
        assert conn.execute("SELECT next_trigger::text FROM tickq.job_kind WHERE name = 'pay'"
                            ).fetchone() == ("retry",)

    log2 = io.StringIO()
    second = dispatcher(server, registry, own_ledger_folder, log2)
    summary = second.tick()
    second.close()

    assert "run.late_report" in log2.getvalue(), log2.getvalue()
    assert summary.claimed == 0, "no retry ran"
    assert list((own_ledger_folder / "spool").glob("*.json")) == []
    with psycopg.connect(server.url) as conn:
        runs = conn.execute("SELECT outcome::text, output_tail, late_report_at IS NOT NULL"
                            " FROM tickq.job_run WHERE kind = 'pay'").fetchall()
        kind = conn.execute("SELECT failure_streak::int, next_trigger::text, due_at > now()"
                            " FROM tickq.job_kind WHERE name = 'pay'").fetchone()
    assert len(runs) == 1, runs
    assert runs[0][0] == "ok" and "paid" in runs[0][1] and runs[0][2]
    assert kind == (0, "schedule", True)


def test_a_tick_claims_again_once_the_database_is_back(
    tmp_path: Path, server: Server, own_ledger_folder: Path
) -> None:
    started, go = tmp_path / "started", tmp_path / "go"
    registry = registry_file(tmp_path, f"""\
[kinds.long]
command = ["sh", "-c", "touch {started}; while [ ! -e {go} ]; do sleep 0.02; done; echo long done"]
every = "1h"
timeout = "30s"

[kinds.later]
command = ["echo", "later ran"]
every = "1h"
timeout = "30s"
""")
    log = io.StringIO()
    d = dispatcher(server, registry, own_ledger_folder, log)
    d.migrate()
    d.sync()
    with db.connect(server.url) as conn:
        # `later` comes due in the middle of the tick, once the database is back (below).
        conn.execute("UPDATE tickq.job_kind SET due_at = 'infinity'"
                     " WHERE name IN ('later', 'tickq.housekeeping')")
    result: dict = {}
    thread = threading.Thread(target=lambda: result.update(summary=d.tick()))
    thread.start()
    wait_for("the long command to start", started.exists)
    server.stop()
    wait_for("a failed claim", lambda: "tick.claim_failed" in log.getvalue())
    server.start()
    with db.connect(server.url) as conn:
        conn.execute("UPDATE tickq.job_kind SET due_at = now() WHERE name = 'later'")
        wait_for("later claimed by the same tick, long still running", lambda: conn.execute(
            "SELECT count(*) FROM tickq.job_run WHERE kind = 'later'").fetchone()[0])
    go.touch()
    thread.join(timeout=60)
    d.close()
    assert "summary" in result, log.getvalue()
    with psycopg.connect(server.url) as conn:
        runs = dict(conn.execute("SELECT kind, outcome::text FROM tickq.job_run").fetchall())
    assert runs == {"long": "ok", "later": "ok"}, log.getvalue()
