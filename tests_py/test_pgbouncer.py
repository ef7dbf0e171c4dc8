"""tickq behind PgBouncer, for real: Debian's `pgbouncer` (1.18) with its default settings,
started by the test in transaction or session pooling mode (tests_py/pg15_cluster.py) in front
of the test run's own PostgreSQL 15 cluster (scripts/pg15.sh url), and the same cluster reached
directly.

A transaction pool hands each transaction to whichever server connection is free and refuses the
`options` startup parameter; tickq then sets its timeouts in every transaction it sends, holds
no session state (no session setting, no session advisory lock, nothing prepared) and migrates
under transaction-level locks. Eight dispatchers ticking at once over racing kinds, through
each of the three: 0 overlaps, the slots never exceeded (sampled in SQL), every result
reported; eight migrators at once apply each file once; a held lock ends a tick at
db_lock_timeout; the timeouts hold through the pool and leave nothing on its server sessions.
"""

from __future__ import annotations

import contextlib
import re
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from pg15_cluster import Cluster, bouncer, the_runs_cluster
from processes import tickq_env
from psycopg import sql

from tickq import db

SLOTS = 4
KINDS = 12
DISPATCHERS = 8
# One statement, so one snapshot: the live runs, the slots they hold, a kind twice.
SAMPLE = """
SELECT (SELECT count(*) FROM tickq.job_run WHERE outcome = 'running'),
       (SELECT count(*) FROM tickq.slot WHERE run_id IS NOT NULL),
       (SELECT coalesce(max(n), 0) FROM (SELECT count(*) AS n FROM tickq.job_run
            WHERE outcome = 'running' GROUP BY kind) AS c)
"""


@pytest.fixture(scope="module")
def server() -> Cluster:
    return the_runs_cluster()


@contextlib.contextmanager
def reached(server: Cluster, mode: str, *more: str) -> Iterator[tuple[str, str]]:
    """A fresh database of `server`: (tickq's URL through `mode`: "transaction" or "session"
    pooling, or "direct"; the superuser's own URL to it)."""
    name = f"tq_{mode}_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(server.admin_url(), autocommit=True) as admin:
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    try:
        if mode == "direct":
            yield server.admin_url(name), server.admin_url(name)
        else:
            with bouncer(server, name, mode, *more) as port:
                yield f"postgresql://postgres@127.0.0.1:{port}/queue", server.admin_url(name)
    finally:
        with psycopg.connect(server.admin_url(), autocommit=True) as admin:
            admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(
                sql.Identifier(name)))


def command(*args: str, url: str, folder: Path) -> list[str]:
    """A tickq command line of the test's registry (`run` without the log's noise)."""
    return [sys.executable, "-m", "tickq.cli", *args, "--registry", str(folder / "registry.toml"),
            "--database-url", url]


def at_once(argvs: list[list[str]], folder: Path) -> list[subprocess.CompletedProcess[str]]:
    """Start every command at once; each one's end."""
    env = tickq_env(TICKQ_RUN_DIR=str(folder / "run"))
    started = [subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, cwd=folder) for argv in argvs]
    ended = []
    for process, argv in zip(started, argvs, strict=True):
        out, err = process.communicate(timeout=300)
        ended.append(subprocess.CompletedProcess(argv, process.returncode, out, err))
    return ended


def write_registry(folder: Path, lock_timeout: str) -> None:
    # KINDS racing kinds for SLOTS slots: each holds its slot a moment, so the dispatchers
    # refill while the others claim.
    lines = ["[settings]", f"slots = {SLOTS}", 'tick = "1m"', 'housekeeping_every = "1d"',
             f'db_lock_timeout = "{lock_timeout}"', ""]
    for i in range(KINDS):
        lines += [f"[kinds.k{i:02d}]", 'command = ["sleep", "0.5"]', 'every = "1h"',
                  'timeout = "30s"', f'priority = "{("urgent", "high", "normal", "low")[i % 4]}"',
                  ""]
    # Kinds run only by hand (a disabled kind may be), each holding its slot long enough that
    # every manual run let go at once claims while the first ones still run.
    for i in range(DISPATCHERS):
        lines += [f"[kinds.m{i:02d}]", 'command = ["sleep", "2"]', 'every = "1h"',
                  'timeout = "30s"', "enabled = false", ""]
    (folder / "registry.toml").write_text("\n".join(lines))


class Sampler(threading.Thread):
    """Reads SAMPLE over its own direct connection until stopped; keeps what broke a limit."""

    def __init__(self, url: str) -> None:
        super().__init__()
        self.url, self.stop = url, threading.Event()
        self.samples, self.busiest = 0, 0
        self.violations: list[str] = []
        self.errors: list[BaseException] = []

    def run(self) -> None:
        try:
            with psycopg.connect(self.url, autocommit=True) as conn:
                while not self.stop.is_set():
                    running, held, same_kind = conn.execute(SAMPLE).fetchone()  # type: ignore[misc]
                    self.samples += 1
                    self.busiest = max(self.busiest, running)
                    if running > SLOTS or held != running or same_kind > 1:
                        self.violations.append(f"{running} running, {held} slots held, "
                                               f"{same_kind} runs of one kind")
                    self.stop.wait(0.005)
        except BaseException as exc:  # surfaced by the test
            self.errors.append(exc)


def gated(argvs: list[list[str]], folder: Path, admin_url: str
          ) -> list[subprocess.CompletedProcess[str]]:
    """The commands started together (each waits for a line on its stdin before Python starts,
    so they arrive at once, well within their lock timeout) and held at the queue's settings
    (locked) until every one waits there, then let go together: their syncs and claims race."""
    with psycopg.connect(admin_url) as gate:
        gate.execute("LOCK TABLE tickq.settings IN ACCESS EXCLUSIVE MODE")
        env = tickq_env(TICKQ_RUN_DIR=str(folder / "run"))
        started = [subprocess.Popen(["sh", "-c", 'read go && exec "$@"', "sh", *argv], env=env,
                                    stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, text=True, cwd=folder)
                   for argv in argvs]
        for process in started:
            assert process.stdin is not None
            process.stdin.write("go\n")
            process.stdin.flush()
        for process in started:
            process.stdin.close()  # type: ignore[union-attr]
            process.stdin = None
        with psycopg.connect(admin_url, autocommit=True) as watch:
            deadline = time.monotonic() + 60
            while watch.execute("SELECT count(*) FROM pg_locks WHERE NOT granted"
                                " AND relation = 'tickq.settings'::regclass"
                                ).fetchone() != (len(argvs),):
                assert time.monotonic() < deadline and all(p.poll() is None for p in started)
                time.sleep(0.01)
        gate.rollback()
    ended = []
    for process, argv in zip(started, argvs, strict=True):
        out, err = process.communicate(timeout=300)
        ended.append(subprocess.CompletedProcess(argv, process.returncode, out, err))
    return ended


def overlaps(admin_url: str) -> int:
    with psycopg.connect(admin_url) as conn:
        return conn.execute(
            "SELECT count(*) FROM tickq.job_run AS a JOIN tickq.job_run AS b"
            " ON a.kind = b.kind AND a.id < b.id"
            " AND tstzrange(a.claimed_at, a.finished_at) && tstzrange(b.claimed_at, b.finished_at)"
        ).fetchone()[0]  # type: ignore[index]


@pytest.mark.parametrize("mode", ["transaction", "session", "direct"])
def test_eight_dispatchers_at_once_hold_every_limit(
    server: Cluster, mode: str, tmp_path: Path
) -> None:
    write_registry(tmp_path, "30s")
    with reached(server, mode) as (url, admin_url):
        # Migrators at once on an empty database (eight through the transaction pool): each
        # file once, whoever applies it.
        migrate = [sys.executable, "-m", "tickq.cli", "migrate", "--database-url", url]
        migrated = at_once([migrate] * (DISPATCHERS if mode == "transaction" else 2), tmp_path)
        assert {m.returncode for m in migrated} == {0}, migrated[0].stderr
        applied = [line for m in migrated for line in m.stdout.splitlines()
                   if line.startswith("migration ")]
        assert sorted(applied) == sorted(f"migration {m.name}" for m in db.migration_files())
        synced = at_once([command("sync", url=url, folder=tmp_path)], tmp_path)[0]
        assert synced.returncode == 0, synced.stderr
        with psycopg.connect(admin_url, autocommit=True) as admin:
            admin.execute("UPDATE tickq.job_kind SET due_at = now() WHERE name LIKE 'k%'")

        sampler = Sampler(admin_url)
        sampler.start()
        try:
            ticks = gated([command("tick", url=url, folder=tmp_path)] * DISPATCHERS, tmp_path,
                          admin_url)
        finally:
            sampler.stop.set()
            sampler.join(timeout=30)
        assert [t.returncode for t in ticks] == [0] * DISPATCHERS, [t.stderr for t in ticks]
        assert not sampler.errors and not sampler.violations, (sampler.errors,
                                                               sampler.violations[:5])
        assert sampler.samples > 20 and sampler.busiest >= 2, (sampler.samples, sampler.busiest)
        assert overlaps(admin_url) == 0
        with psycopg.connect(admin_url) as conn:
            runs = conn.execute("SELECT kind, outcome::text, count(DISTINCT dispatcher)"
                                " FROM tickq.job_run WHERE kind LIKE 'k%' GROUP BY 1, 2").fetchall()
            total = conn.execute("SELECT count(*) FROM tickq.job_run").fetchone()
        # every kind ran once, its result reported (claims take the free slots one dispatcher
        # at a time: whoever claimed first refills them as its runs end)
        assert sorted(runs) == [(f"k{i:02d}", "ok", 1) for i in range(KINDS)], runs
        claimed = [int(re.search(r"tick.done claimed=(\d+)", t.stdout + t.stderr).group(1))
                   for t in ticks]
        assert (sum(claimed),) == total, claimed  # and each claim was one dispatcher's

        # Eight manual runs at once, one kind each, for four slots: each held by its own
        # dispatcher, four at once, never more; the rest refused.
        sampler = Sampler(admin_url)
        sampler.start()
        try:
            manual = gated([command("run", f"m{i:02d}", url=url, folder=tmp_path)
                            for i in range(DISPATCHERS)], tmp_path, admin_url)
        finally:
            sampler.stop.set()
            sampler.join(timeout=30)
        assert not sampler.errors and not sampler.violations, sampler.violations[:5]
        ran = [m for m in manual if m.returncode == 0]
        assert len(ran) >= SLOTS and sampler.busiest == SLOTS, (
            [m.returncode for m in manual], sampler.busiest)
        assert all("slots are in use" in m.stderr for m in manual if m.returncode), manual
        assert overlaps(admin_url) == 0
        with psycopg.connect(admin_url) as conn:
            hosts = conn.execute("SELECT count(DISTINCT dispatcher), array_agg(DISTINCT outcome"
                                 "::text) FROM tickq.job_run WHERE run_trigger = 'manual'"
                                 ).fetchone()
        assert hosts == (len(ran), ["ok"]), hosts

        # A lock held on the queue ends the next tick at db_lock_timeout (1 s), not at the
        # statement timeout nor at the pooler's query_wait_timeout.
        write_registry(tmp_path, "1s")
        with psycopg.connect(admin_url) as holder:
            holder.execute("LOCK TABLE tickq.settings IN ACCESS EXCLUSIVE MODE")
            held = at_once([command("tick", url=url, folder=tmp_path)], tmp_path)[0]
            holder.rollback()
        assert held.returncode == 3, held
        assert "canceling statement due to lock timeout" in held.stderr, held.stderr


def test_timeouts_hold_through_a_transaction_pool_and_stay_in_their_transaction(
    server: Cluster,
) -> None:
    # One server connection behind the pool: whatever a session left on it, the next client
    # would find.
    with reached(server, "transaction", "default_pool_size = 1") as (url, _admin):
        with db.connect(url, timeouts=db.Timeouts(connect=5, statement=1, lock=3)) as conn:
            assert conn.execute("SELECT current_setting('statement_timeout'),"
                                " current_setting('lock_timeout')").fetchone() == ("1s", "3s")
            with pytest.raises(psycopg.errors.QueryCanceled, match="statement timeout"):
                conn.execute("SELECT pg_sleep(30)")
            with conn.transaction():
                assert conn.execute("SELECT current_setting('lock_timeout'), current_setting("
                                    "'idle_in_transaction_session_timeout')").fetchone() == (
                    "3s", "3s")
            db.migrate(conn)  # a migration's statement timeout is its transactions' own
        with psycopg.connect(url, autocommit=True, prepare_threshold=None) as other:
            assert other.execute("SELECT current_setting('statement_timeout'),"
                                 " current_setting('lock_timeout'), current_setting("
                                 "'idle_in_transaction_session_timeout')").fetchone() == (
                "0", "0", "0")
            assert other.execute("SELECT count(*) FROM pg_prepared_statements").fetchone() == (0,)


OPERATOR = """\
[settings]
slots = 2
tick = "1m"
housekeeping_every = "1d"

[kinds.chain]
every = "1h"

[[kinds.chain.steps]]
name = "one"
command = ["echo", "first step"]
timeout = "10s"

[[kinds.chain.steps]]
name = "two"
command = ["echo", "second step"]
timeout = "10s"

[kinds.long]
command = ["sleep", "60"]
every = "1h"
timeout = "2m"
"""


def test_the_other_commands_through_a_transaction_pool(
    server: Cluster, tmp_path: Path, pg_server_url: str
) -> None:
    # pg_server_url: `check` simulates on the test server (TICKQ_SCRATCH_URL, conftest.py)
    (tmp_path / "registry.toml").write_text(OPERATOR)
    with reached(server, "transaction") as (url, admin_url):
        def tickq(*args: str) -> subprocess.CompletedProcess[str]:
            return at_once([command(*args, url=url, folder=tmp_path)], tmp_path)[0]

        assert tickq("sync").returncode == 0
        chain = tickq("run", "chain")  # a chain's steps, each reported
        assert chain.returncode == 0 and chain.stdout == "first step\nsecond step\n", chain
        for args, shows in ((["status"], "chain"), (["explain", "chain"], "last run"),
                            (["metrics"], "tickq_"), (["history", "chain"], "ok"),
                            (["check"], "worst case fits"),
                            (["report", "--html", str(tmp_path / "page.html")], "")):
            done = tickq(*args)
            assert done.returncode == 0 and shows in done.stdout, (args, done)
        assert "chain" in (tmp_path / "page.html").read_text()  # the page's snapshot
        # a cancel asked through the pool reaches the dispatcher holding the run
        env = tickq_env(TICKQ_RUN_DIR=str(tmp_path / "run"))
        running = subprocess.Popen(command("run", "long", url=url, folder=tmp_path), env=env,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        with psycopg.connect(admin_url, autocommit=True) as admin:
            deadline = time.monotonic() + 60
            while admin.execute("SELECT count(*) FROM tickq.job_run WHERE kind = 'long'"
                                " AND started_at IS NOT NULL").fetchone() != (1,):
                assert time.monotonic() < deadline and running.poll() is None
                time.sleep(0.02)
        assert tickq("cancel", "long").returncode == 0
        _out, err = running.communicate(timeout=60)
        assert running.returncode == 1 and "cancelled" in err, err
