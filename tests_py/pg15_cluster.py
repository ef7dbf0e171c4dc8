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
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from psycopg import conninfo

REPO = Path(__file__).resolve().parent.parent
BIN = Path("/usr/lib/postgresql/15/bin")
PGBOUNCER = shutil.which("pgbouncer") or "/usr/sbin/pgbouncer"
PG_USER = "postgres"  # Debian's system user for PostgreSQL and PgBouncer
TRUST_LOCAL = "local all all trust\n"
# A free port is only free when probed: another worker's server may take it before ours binds.
PORT_ATTEMPTS = 5


def free_port(address: str = "127.0.0.1") -> int:
    with socket.socket() as probe:
        probe.bind((address, 0))
        return probe.getsockname()[1]


def on_a_free_port(start: Callable[[int], subprocess.CompletedProcess[str]], log: Path,
                   address: str = "127.0.0.1") -> int:
    """The port a server (`start(port)`: pg_ctl's run) started on: one probed free, or another
    if that one was taken between the probe and the start (by another xdist worker's server or
    a client's outgoing connection), which the server's `log` says."""
    for _attempt in range(PORT_ATTEMPTS):
        port = free_port(address)
        done = start(port)
        if done.returncode == 0:
            return port
        if not _port_taken(log):
            break
    raise AssertionError(done.stderr + (log.read_text() if log.exists() else ""))


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
    folder = _private_folder("tq-pg15-")
    made = Cluster(folder, 0)
    try:
        as_postgres(BIN / "initdb", "-D", made.pgdata, "-U", "postgres", "--auth=trust",
                    "--encoding=UTF8", "--no-sync")
        (made.pgdata / "pg_hba.conf").write_text(hba)
        log = made.folder / "server.log"

        def start(port: int) -> subprocess.CompletedProcess[str]:
            options = " ".join([f"-c listen_addresses=127.0.0.1 -c port={port}",
                                f"-c unix_socket_directories={made.folder} -c fsync=off",
                                *(f"-c {s}" for s in settings)])
            return as_postgres(BIN / "pg_ctl", "-D", made.pgdata, "-w", "-t", "60", "-o",
                               options, "-l", log, "start", check=False)

        made = Cluster(folder, on_a_free_port(start, log))
        yield made
    finally:
        as_postgres(BIN / "pg_ctl", "-D", made.pgdata, "-w", "-m", "immediate", "stop",
                    check=False)
        shutil.rmtree(folder, ignore_errors=True)


@contextlib.contextmanager
def bouncer(server: Cluster, dbname: str, mode: str, *more: str) -> Iterator[int]:
    """Debian's PgBouncer in pool `mode` with its defaults otherwise (`more`: further lines of
    its [pgbouncer] section), in front of `dbname` of `server` as database `queue`; its port.
    Clients log in as `postgres` without a password (auth_type any); PgBouncer reaches the
    server over its socket."""
    folder = _private_folder("tq-bouncer-")
    ini, log = folder / "pgbouncer.ini", folder / "pgbouncer.log"
    try:
        for _attempt in range(PORT_ATTEMPTS):
            port = free_port()
            ini.write_text("\n".join([
                "[databases]",
                f"queue = host={server.folder} port={server.port} dbname={dbname} user=postgres",
                "[pgbouncer]", "listen_addr = 127.0.0.1", f"listen_port = {port}",
                "unix_socket_dir =", "auth_type = any", f"pool_mode = {mode}",
                f"logfile = {log}", f"pidfile = {folder}/pgbouncer.pid", *more, ""]))
            shutil.chown(ini, PG_USER, PG_USER)
            log.unlink(missing_ok=True)
            as_postgres(PGBOUNCER, "-d", ini)
            if _bouncer_says(log, port):
                break
        else:
            raise AssertionError(log.read_text())
        yield port
    finally:
        pid = folder / "pgbouncer.pid"
        if pid.exists():
            with contextlib.suppress(ProcessLookupError, ValueError, PermissionError):
                subprocess.run(["kill", pid.read_text().strip()], check=False, timeout=10)
        shutil.rmtree(folder, ignore_errors=True)


def _bouncer_says(log: Path, port: int) -> bool:
    """PgBouncer's own word (its log) that it listens on `port` (True) or could not (False):
    not a probe of the port, which another worker's server that took the port would answer."""
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        text = log.read_text() if log.exists() else ""
        if f"listening on 127.0.0.1:{port}" in text:
            return True
        if "FATAL" in text:
            assert _port_taken(log), text
            return False
        time.sleep(0.02)
    raise AssertionError(f"PgBouncer said nothing of port {port} in 20 s: {log.read_text()}")


def _port_taken(log: Path) -> bool:
    """The free port was taken between the probe and the start (by another worker's server or
    a client's outgoing connection): the log says so."""
    return log.exists() and "Address already in use" in log.read_text()
