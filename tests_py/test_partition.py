"""A dispatcher host cut off from the database mid-run, for real: two hosts in network
namespaces (tests_py/hosts_net.py builds them), one PostgreSQL on the bridge. While host 1's
command runs, its link goes down (`ip link set eth0 down` inside its namespace) for longer than
the kind's lease, then comes back.

What must hold: the command is stopped by its own watchdog at its timeout (not earlier, not
never); the kind is not claimed by the other host while that command may still be alive (the
lease covers the timeout); once the link is back, the cut-off host's real outcome (`timeout`)
is recorded on its run, marked late, instead of being refused because the lease had turned the
run `lost`; never two copies at once.
"""

from __future__ import annotations

import secrets
import shutil
import tempfile
import textwrap
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg
import pytest
from hosts_net import DBNAME, Host, Network, free_subnet, ip, start_server, stop_server
from psycopg import sql

from tickq import db
from tickq.cli.roles import roles_script

pytestmark = pytest.mark.xdist_group("netns")  # with test_hosts' (see there)

TIMEOUT_S = 4
MARGIN_S = 1


def write_registry(folder: Path, log: Path) -> Path:
    script = folder / "work.sh"
    script.write_text(f"""#!/bin/sh
log() {{ echo "$TICKQ_RUN_ID $1 $(date +%s.%N) $(hostname)" >> {log}; }}
log start
trap 'log end; exit 143' TERM
sleep 60 &
wait
""")
    script.chmod(0o755)
    path = folder / "registry.toml"
    path.write_text(textwrap.dedent(f"""
        [settings]
        slots = 2
        tick = "1m"
        lease_margin = "{MARGIN_S}s"
        retry_base = "1s"
        retry_max = "1s"
        db_connect_timeout = "2s"
        housekeeping_timeout = "3s"  # a lease covers the longest timeout: this one is 4 s

        [kinds.work]
        command = ["{script}"]
        every = "1h"
        timeout = "{TIMEOUT_S}s"
        retries = 1
    """))
    return path


def events(log: Path) -> list[tuple[int, str, float, str]]:
    rows = []
    for line in log.read_text().splitlines():
        run_id, event, at, host = line.split()
        rows.append((int(run_id), event, float(at), host))
    return rows


def wait_for(found: Callable[[], Any], hosts: list[Host], seconds: float = 60) -> Any:
    """What `found` returns once it is something, asked until `seconds` pass."""
    deadline = time.monotonic() + seconds
    while not (value := found()):
        assert time.monotonic() < deadline, [h.output() for h in hosts]
        time.sleep(0.02)
    return value


def test_a_host_cut_off_mid_run_is_stopped_by_its_watchdog_and_its_outcome_recorded_late() -> None:
    network = Network(tag=secrets.token_hex(2), subnet=free_subnet())
    folder = Path(tempfile.mkdtemp(prefix="tq-part-"))
    folder.chmod(0o755)
    hosts: list[Host] = []
    server = None
    try:
        network.build(2)
        server = start_server(folder, network.server_address, f"{network.server_address}/24")
        db.create_database(db.with_dbname(server.admin_url, "postgres"), DBNAME)
        password = secrets.token_hex(16)
        with db.connect(server.admin_url) as admin:
            admin.execute(roles_script("tq_owner", "tq_dispatcher", "tq_reader"))  # type: ignore
            admin.execute(sql.SQL("ALTER ROLE tq_dispatcher PASSWORD {}").format(
                sql.Literal(password)))
        with db.connect(server.socket_url("tq_owner")) as owner:
            db.migrate(owner)
        log = folder / "commands.log"
        log.touch()
        log.chmod(0o666)
        registry = write_registry(folder, log)
        url = f"postgresql://tq_dispatcher@{server.address}:{server.port}/{DBNAME}"
        for i, ns in enumerate(network.namespaces, start=1):
            home = folder / f"host{i}"
            home.mkdir()
            passfile = home / "pgpass"
            passfile.write_text(
                f"{server.address}:{server.port}:{DBNAME}:tq_dispatcher:{password}\n")
            passfile.chmod(0o600)
            hosts.append(Host(f"host{i}", ns, url, registry, home, passfile))
        for host in hosts:
            host.start()

        def first_start() -> tuple[int, str, float, str] | None:
            starts = [e for e in events(log) if e[1] == "start"]
            return starts[0] if starts else None

        run_id, _, started, victim_name = wait_for(first_start, hosts)
        victim = next(h for h in hosts if h.name == victim_name)
        ns = victim.ns
        ip("netns", "exec", ns, "ip", "link", "set", "eth0", "down")  # cut off mid-run
        with psycopg.connect(server.admin_url, autocommit=True) as conn:
            # Past its watchdog (the command's trap logs its end) and past its lease (the other
            # host's claim expired it into `lost`), the link comes back.
            wait_for(lambda: any(e[0] == run_id and e[1] == "end" for e in events(log)), hosts)
            wait_for(lambda: conn.execute("SELECT outcome = 'lost' FROM tickq.job_run"
                                          " WHERE id = %s", (run_id,)).fetchone()[0], hosts)
            ip("netns", "exec", ns, "ip", "link", "set", "eth0", "up")

            def recorded() -> tuple | None:
                return conn.execute(
                    "SELECT outcome::text, late_report_at IS NOT NULL,"
                    " extract(EPOCH FROM duration)::float8 FROM tickq.job_run WHERE id = %s"
                    " AND outcome <> 'lost' AND outcome <> 'running'", (run_id,)).fetchone()

            row = wait_for(recorded, hosts)
            outcome, late, duration = row
            for host in hosts:
                host.finish()
        # Its real outcome, recorded late over the `lost` the other host's claim made of it.
        assert (outcome, late) == ("timeout", True), (row, [h.output() for h in hosts])
        # Stopped by its own watchdog (not never: its trap logged the SIGTERM), at its timeout,
        # not earlier: a lower bound, which no load on the machine can break.
        seen = events(log)
        # Its trap may log twice: the watchdog's SIGTERM to the group, then to each descendant.
        end = min((e for e in seen if e[0] == run_id and e[1] == "end"), key=lambda e: e[2])
        assert end[2] - started >= TIMEOUT_S - 0.2 and duration >= TIMEOUT_S - 0.2, (seen, duration)
        # The other host's copy (the retry of `lost`) started only after the first had ended.
        others = [e for e in seen if e[0] != run_id and e[1] == "start"]
        assert all(e[2] >= end[2] for e in others), seen
    finally:
        for host in hosts:
            host.stop.set()
        network.tear_down()
        if server is not None:
            stop_server(server)
        shutil.rmtree(folder, ignore_errors=True)
