"""A PostgreSQL 15 cluster of a test's own (or the test run's: scripts/pg15.sh url), and a
PgBouncer in front of one: Debian's binaries (scripts/pg15.sh installs them), run by the system
user `postgres` (neither runs as root) from a temporary folder, on free ports of 127.0.0.1 and a
socket in that folder; stopped and removed afterwards. Never an existing cluster, user or service
of the machine."""

from __future__ import annotations

import contextlib
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from psycopg import conninfo

REPO = Path(__file__).resolve().parent.parent
BIN = Path("/usr/lib/postgresql/15/bin")
PGBOUNCER = shutil.which("pgbouncer") or "/usr/sbin/pgbouncer"
PG_USER = "postgres"  # Debian's system user for PostgreSQL and PgBouncer
TRUST_LOCAL = "local all all trust\n"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def as_postgres(*args: str | Path, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(a) for a in args], user=PG_USER, check=check,
                          capture_output=True, text=True, timeout=120)


@dataclass(frozen=True)
class Cluster:
    folder: Path  # the socket's folder too
    port: int

    @property
    def pgdata(self) -> Path:
        return self.folder / "pg"

    def admin_url(self, dbname: str = "postgres") -> str:
        """The superuser `postgres` over the socket (trusted: only root and the server's user
        can reach the folder)."""
        return f"postgresql://postgres@/{dbname}?host={self.folder}&port={self.port}"


def the_runs_cluster() -> Cluster:
    """The test run's own cluster (scripts/pg15.sh url: the superuser `postgres` over its
    socket, trusted)."""
    done = subprocess.run([str(REPO / "scripts" / "pg15.sh"), "url"], capture_output=True,
                          text=True, timeout=600, check=False)
    if done.returncode != 0:
        pytest.fail(f"Debian's PostgreSQL 15 is missing: {done.stderr.strip()}")
    params = conninfo.conninfo_to_dict(done.stdout.strip())
    return Cluster(Path(str(params["host"])), int(str(params["port"])))


def _private_folder(prefix: str) -> Path:
    folder = Path(tempfile.mkdtemp(prefix=prefix))  # short: a socket lives in it
    folder.chmod(0o700)
    shutil.chown(folder, PG_USER, PG_USER)
    return folder


@contextlib.contextmanager
def cluster(hba: str = TRUST_LOCAL, *settings: str) -> Iterator[Cluster]:
    """A fresh cluster whose pg_hba.conf is `hba`, with `settings` ("name=value") given to the
    server; stopped (immediate) and removed when the block ends."""
    if not (BIN / "initdb").exists():
        pytest.fail("Debian's PostgreSQL 15 is missing: run scripts/pg15.sh install")
    made = Cluster(_private_folder("tq-pg15-"), free_port())
    try:
        as_postgres(BIN / "initdb", "-D", made.pgdata, "-U", "postgres", "--auth=trust",
                    "--encoding=UTF8", "--no-sync")
        (made.pgdata / "pg_hba.conf").write_text(hba)
        options = " ".join([f"-c listen_addresses=127.0.0.1 -c port={made.port}",
                            f"-c unix_socket_directories={made.folder} -c fsync=off",
                            *(f"-c {s}" for s in settings)])
        as_postgres(BIN / "pg_ctl", "-D", made.pgdata, "-w", "-t", "60", "-o", options,
                    "-l", made.folder / "server.log", "start")
        yield made
    finally:
        as_postgres(BIN / "pg_ctl", "-D", made.pgdata, "-w", "-m", "immediate", "stop",
                    check=False)
        shutil.rmtree(made.folder, ignore_errors=True)


@contextlib.contextmanager
def bouncer(server: Cluster, dbname: str, mode: str, *more: str) -> Iterator[int]:
    """Debian's PgBouncer in pool `mode` with its defaults otherwise (`more`: further lines of
    its [pgbouncer] section), in front of `dbname` of `server` as database `queue`; its port.
    Clients log in as `postgres` without a password (auth_type any); PgBouncer reaches the
    server over its socket."""
    folder = _private_folder("tq-bouncer-")
    port = free_port()
    ini = folder / "pgbouncer.ini"
    ini.write_text("\n".join([
        "[databases]",
        f"queue = host={server.folder} port={server.port} dbname={dbname} user=postgres",
        "[pgbouncer]", "listen_addr = 127.0.0.1", f"listen_port = {port}",
        "unix_socket_dir =", "auth_type = any", f"pool_mode = {mode}",
        f"logfile = {folder}/pgbouncer.log", f"pidfile = {folder}/pgbouncer.pid", *more, ""]))
    shutil.chown(ini, PG_USER, PG_USER)
    try:
        as_postgres(PGBOUNCER, "-d", ini)
        deadline = time.monotonic() + 20
        while not _listening(port):
            if time.monotonic() > deadline:
                raise AssertionError((folder / "pgbouncer.log").read_text())
            time.sleep(0.02)
        yield port
    finally:
        pid = folder / "pgbouncer.pid"
        if pid.exists():
            with contextlib.suppress(ProcessLookupError, ValueError, PermissionError):
                subprocess.run(["kill", pid.read_text().strip()], check=False, timeout=10)
        shutil.rmtree(folder, ignore_errors=True)


def _listening(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0
