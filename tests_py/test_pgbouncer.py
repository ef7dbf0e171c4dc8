"""tickq behind PgBouncer in transaction pooling mode, for real: Debian's `pgbouncer` started by
the test in front of the test run's own PostgreSQL 15 cluster (scripts/pg15.sh url), as the
system user `postgres` (PgBouncer will not run as root).

A transaction pooler cannot give what tickq sets on each connection: its statement and lock
timeouts travel in the `options` startup parameter, which PgBouncer refuses. tickq says so at
once, in one line naming the pooler and what to do (exit 3), instead of a bare "unsupported
startup parameter"; and through PgBouncer in session pooling mode, which passes a session
through whole, ticks work.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from psycopg import sql

REPO = Path(__file__).resolve().parent.parent
PGBOUNCER = shutil.which("pgbouncer") or "/usr/sbin/pgbouncer"


def pg15_url() -> str:
    done = subprocess.run([str(REPO / "scripts" / "pg15.sh"), "url"], capture_output=True,
                          text=True, timeout=600, check=False)
    if done.returncode != 0:
        pytest.fail(f"Debian's PostgreSQL 15 is missing: {done.stderr.strip()}")
    return done.stdout.strip()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_bouncer(folder: Path, dbname: str, mode: str, ignore: str = "") -> int:
    port = free_port()
    server = psycopg.conninfo.conninfo_to_dict(pg15_url())  # the test run's own cluster
    (folder / "users.txt").write_text('"postgres" ""\n')
    (folder / "pgbouncer.ini").write_text(f"""\
[databases]
queue = host={server["host"]} port={server["port"]} dbname={dbname} user=postgres

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = {port}
unix_socket_dir =
auth_type = any
auth_file = {folder}/users.txt
pool_mode = {mode}
ignore_startup_parameters = {ignore}
logfile = {folder}/pgbouncer.log
pidfile = {folder}/pgbouncer.pid
""")
    shutil.chown(folder, "postgres", "postgres")
    for name in ("users.txt", "pgbouncer.ini"):
        shutil.chown(folder / name, "postgres", "postgres")
    subprocess.run([PGBOUNCER, "-d", str(folder / "pgbouncer.ini")], user="postgres",
                   check=True, capture_output=True, timeout=30)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return port
        time.sleep(0.05)
    raise AssertionError((folder / "pgbouncer.log").read_text())


def stop_bouncer(folder: Path) -> None:
    pid_file = folder / "pgbouncer.pid"
    if pid_file.exists():
        with contextlib.suppress(ProcessLookupError, ValueError):
            os.kill(int(pid_file.read_text().strip()), 15)


@pytest.fixture
def queue_db() -> Iterator[tuple[str, str]]:
    """A database of Debian's PostgreSQL 15, migrated over a direct connection."""
    admin = pg15_url()
    name = f"tq_bouncer_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    direct = psycopg.conninfo.make_conninfo(admin, dbname=name)
    try:
        yield name, direct
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(
                sql.Identifier(name)))


def tickq(*args: str, url: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "TICKQ_REGISTRY")}
    env.update(PYTHONPATH=str(REPO / "python_runner"), DATABASE_URL=url,
               TICKQ_RUN_DIR=str(cwd / "run"))
    return subprocess.run([sys.executable, "-m", "tickq.cli", *args], env=env, cwd=cwd,
                          capture_output=True, text=True, timeout=120, check=False)


@pytest.fixture
def bouncer_folder() -> Iterator[Path]:
    folder = Path(tempfile.mkdtemp(prefix="tq-bouncer-"))
    try:
        yield folder
    finally:
        stop_bouncer(folder)
        shutil.rmtree(folder, ignore_errors=True)


def demo_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "demo"
    shutil.copytree(REPO / "examples" / "demo", folder)
    return folder


def test_transaction_pooling_is_named_in_one_line_with_what_to_do(
    tmp_path: Path, queue_db: tuple[str, str], bouncer_folder: Path
) -> None:
    name, _direct = queue_db
    port = start_bouncer(bouncer_folder, name, "transaction")
    folder = demo_folder(tmp_path)
    done = tickq("tick", "--registry", "registry.toml",
                 url=f"postgresql://postgres@127.0.0.1:{port}/queue", cwd=folder)
    assert done.returncode == 3, done
    lines = [ln for ln in done.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, done.stderr
    assert "options" in lines[0] and "PgBouncer" in lines[0] and "pool_mode = session" in lines[0]
    assert "Traceback" not in done.stderr


def test_ticks_of_the_demo_registry_run_through_a_session_pool_with_the_roles_timeouts(
    tmp_path: Path, queue_db: tuple[str, str], bouncer_folder: Path
) -> None:
    name, direct = queue_db
    with psycopg.connect(direct, autocommit=True) as conn:
        conn.execute(sql.SQL("ALTER ROLE postgres IN DATABASE {} SET lock_timeout = '1500ms'")
                     .format(sql.Identifier(name)))
    try:
        port = start_bouncer(bouncer_folder, name, "session", ignore="options")
        folder = demo_folder(tmp_path)
        url = f"postgresql://postgres@127.0.0.1:{port}/queue"
        for _ in range(2):
            done = tickq("tick", "--registry", "registry.toml", url=url, cwd=folder)
            assert done.returncode == 0, done.stdout + done.stderr
        with psycopg.connect(direct) as conn:
            ran = dict(conn.execute(
                "SELECT kind, count(*) FROM tickq.job_run WHERE kind IN ('hello', 'slow_report')"
                " GROUP BY kind").fetchall())
        assert ran.get("hello", 0) >= 1 and ran.get("slow_report", 0) >= 1, ran
        # A held row through the pool: the role's lock timeout still ends the wait.
        with psycopg.connect(direct) as holder:
            holder.execute("LOCK TABLE tickq.settings IN ACCESS EXCLUSIVE MODE")
            # (without it the tick would wait for the holder until tickq()'s 120 s ran out)
            done = tickq("tick", "--registry", "registry.toml", url=url, cwd=folder)
            holder.rollback()
        assert done.returncode == 3 and "lock" in done.stderr, done
    finally:
        with psycopg.connect(direct, autocommit=True) as conn:
            conn.execute(sql.SQL("ALTER ROLE postgres IN DATABASE {} RESET lock_timeout")
                         .format(sql.Identifier(name)))
