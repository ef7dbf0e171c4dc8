"""A primary and a streaming standby of Debian's PostgreSQL 15 (scripts/pg15.sh installs it),
made by pg_basebackup, two clusters of a test's own on 127.0.0.1 in a folder the `folder`
fixture makes and cleans up; ticks and `tickq` commands that reach them through one libpq
multi-host URL; a command that logs its start and end; replication cut or caught up."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import psycopg
import pytest
from pg15_cluster import on_a_free_port

from tickq import db

REPO = Path(__file__).resolve().parent.parent
BIN = Path("/usr/lib/postgresql/15/bin")
PG_USER = "postgres"  # Debian's PostgreSQL runs as this system user
DBNAME = "queue"
HBA = ("local all all trust\nlocal replication all trust\n"
       "host all all 127.0.0.1/32 trust\nhost replication all 127.0.0.1/32 trust\n")


def as_postgres(*args: str | Path, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run([str(a) for a in args], user=PG_USER, check=check,
                          capture_output=True, text=True, timeout=120)


@dataclass
class Cluster:
    pgdata: Path
    port: int

    def start(self) -> None:
        """Started on a free port (pg15_cluster.on_a_free_port)."""
        def start(port: int) -> subprocess.CompletedProcess[str]:
            options = (f"-c listen_addresses=127.0.0.1 -c port={port}"
                       f" -c unix_socket_directories={self.pgdata} -c wal_level=replica"
                       " -c max_wal_senders=4 -c hot_standby=on -c fsync=off")
            return as_postgres(BIN / "pg_ctl", "-D", self.pgdata, "-w", "-t", "60", "-o",
                               options, "-l", self.pgdata / "server.log", "start", check=False)

        self.port = on_a_free_port(start, self.pgdata / "server.log")

    def stop(self, mode: str = "fast") -> None:
        as_postgres(BIN / "pg_ctl", "-D", self.pgdata, "-w", "-m", mode, "stop", check=False)

    def promote(self) -> None:
        as_postgres(BIN / "pg_ctl", "-D", self.pgdata, "-w", "-t", "60", "promote")

    @property
    def admin_url(self) -> str:
        return f"postgresql://postgres@/{DBNAME}?host={self.pgdata}&port={self.port}"


@dataclass
class Pair:
    primary: Cluster
    standby: Cluster

    @property
    def url(self) -> str:
        """Both hosts, the primary first: libpq skips the one that is down or read-only."""
        return (f"postgresql://postgres@127.0.0.1:{self.primary.port},127.0.0.1:"
                f"{self.standby.port}/{DBNAME}?target_session_attrs=read-write&connect_timeout=3")


def build_pair(folder: Path, synchronous: bool) -> Pair:
    primary = Cluster(folder / "primary", 0)
    primary.pgdata.mkdir(mode=0o700)
    shutil.chown(primary.pgdata, PG_USER, PG_USER)
    as_postgres(BIN / "initdb", "-D", primary.pgdata, "-U", "postgres", "--auth=trust")
    (primary.pgdata / "pg_hba.conf").write_text(HBA)
    primary.start()
    with psycopg.connect(primary.admin_url.replace(f"/{DBNAME}?", "/postgres?"),
                         autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {DBNAME}")
    with db.connect(primary.admin_url) as conn:
        db.migrate(conn)
    standby = Cluster(folder / "standby", 0)
    as_postgres(BIN / "pg_basebackup", "-h", primary.pgdata, "-p", str(primary.port),
                "-U", "postgres", "-D", standby.pgdata, "-R", "-X", "stream", "-c", "fast")
    standby.start()
    pair = Pair(primary, standby)
    if synchronous:  # only now: before a standby streams, every commit would wait for one
        with psycopg.connect(primary.admin_url, autocommit=True) as conn:
            conn.execute("ALTER SYSTEM SET synchronous_standby_names = '*'")
            conn.execute("ALTER SYSTEM SET synchronous_commit = on")
            conn.execute("SELECT pg_reload_conf()")
    wait_for("the standby to stream", lambda: streaming(pair, synchronous), 60)
    return pair


def streaming(pair: Pair, synchronous: bool) -> bool:
    with psycopg.connect(pair.primary.admin_url) as conn:
        states = conn.execute("SELECT sync_state FROM pg_stat_replication"
                              " WHERE state = 'streaming'").fetchall()
    return bool(states) and (not synchronous or ("sync",) in states)


def wait_for(what: str, check, seconds: float = 30.0):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        with contextlib.suppress(psycopg.OperationalError):
            value = check()
            if value:
                return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.fixture
def folder() -> Iterator[Path]:
    if not (BIN / "pg_basebackup").exists():
        pytest.fail("Debian's PostgreSQL 15 is missing: run scripts/pg15.sh install")
    path = Path(tempfile.mkdtemp(prefix="tq-failover-"))  # short: sockets live in it
    path.chmod(0o711)
    shutil.chown(path, PG_USER, PG_USER)
    clusters: list[Cluster] = []
    try:
        yield path
    finally:
        for name in ("primary", "standby"):
            if (path / name).exists():
                clusters.append(Cluster(path / name, 0))
        for cluster in clusters:
            cluster.stop("immediate")
        shutil.rmtree(path, ignore_errors=True)


def tick(registry: Path, url: str, run_dir: Path) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "TICKQ_REGISTRY")}
    env.update(PYTHONPATH=str(REPO / "python_runner"), DATABASE_URL=url,
               TICKQ_RUN_DIR=str(run_dir))
    return subprocess.Popen([sys.executable, "-m", "tickq.cli", "tick", "--registry",
                             str(registry)], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)


class Said:
    """What a process writes to its stdout, read as it comes by a thread of its own."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        self.lines: list[str] = []
        self.reader = threading.Thread(target=lambda: self.lines.extend(proc.stdout), daemon=True)
        self.reader.start()

    def text(self) -> str:
        return "".join(list(self.lines))

    def all(self, proc: subprocess.Popen[str], seconds: float = 120) -> str:
        """Everything, once the process has ended."""
        proc.wait(timeout=seconds)
        self.reader.join(timeout=seconds)
        return self.text()


def write_registry(folder: Path) -> Path:
    """One kind whose command says when it starts and ends, and waits for the test's go."""
    script = folder / "work.sh"
    script.write_text(f"""#!/bin/sh
echo "start $$" >> {folder}/runs.log
touch {folder}/started
while [ ! -e {folder}/go ]; do sleep 0.05; done
echo "end $$" >> {folder}/runs.log
echo finished
""")
    script.chmod(0o755)
    registry = folder / "registry.toml"
    registry.write_text(f"""\
[settings]
slots = 2
db_connect_timeout = "3s"

[kinds.work]
command = ["{script}"]
every = "1h"
timeout = "2m"
""")
    return registry


def runs_log(folder: Path) -> list[str]:
    path = folder / "runs.log"
    return path.read_text().split("\n")[:-1] if path.exists() else []


def never_overlapping(lines: list[str]) -> bool:
    open_runs = 0
    for line in lines:
        open_runs += 1 if line.startswith("start") else -1
        if open_runs > 1:
            return False
    return open_runs == 0


def cut_replication(pair: Pair) -> None:
    """The standby stops receiving WAL: what the primary commits from now on is lost when the
    standby is promoted, as an asynchronous standby's lag loses it."""
    with psycopg.connect(pair.standby.admin_url, autocommit=True) as conn:
        conn.execute("ALTER SYSTEM SET primary_conninfo = ''")
        conn.execute("SELECT pg_reload_conf()")
    wait_for("the standby to stop streaming", lambda: not streaming(pair, False), 30)


def replayed(pair: Pair) -> bool:
    with psycopg.connect(pair.primary.admin_url) as conn:
        return conn.execute("SELECT bool_and(replay_lsn >= pg_current_wal_lsn())"
                            " FROM pg_stat_replication").fetchone()[0]


def tickq_cli(*args: str, url: str, run_dir: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "TICKQ_REGISTRY")}
    env.update(PYTHONPATH=str(REPO / "python_runner"), DATABASE_URL=url,
               TICKQ_RUN_DIR=str(run_dir))
    return subprocess.run([sys.executable, "-m", "tickq.cli", *args], env=env,
                          capture_output=True, text=True, timeout=60, check=False)
