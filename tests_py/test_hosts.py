"""Three dispatcher hosts on one database, for real: network and UTS namespaces made by the test.

Each host is a network namespace with its own address in a /24 that exists only inside this
test (a bridge in the root namespace, a veth pair per host), its own hostname (`unshare --uts`)
and its own ledger folder. One PostgreSQL, started for this test, listens on the bridge's
address only and takes scram-sha-256 passwords from that subnet; each host's dispatcher logs in
as the least-privileged dispatcher role (sql/roles.sql) with its password in a passfile, not in
its URL. All three run `tickq tick` over and over at once, as their timers would, on two slots;
one host is then killed outright (every process in its namespace SIGKILLed, the namespace
deleted) while it runs a command.

Every command appends when it starts and ends to a log all hosts share (the file system is
common), so the check is on what really ran, not only on what the database says: no kind ran
twice at once, never more commands at once than slots, the dead host's runs became `lost` once
their lease ran out and were retried by another host. A sampler also counts the busy slot rows
and which hosts are connected.

Without namespaces (not root, no `ip`), the test fails: it is the only proof of these promises.
"""
from __future__ import annotations

import secrets
import shutil
import signal
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Iterator
from pathlib import Path

import pytest
from hosts_net import (
    DBNAME,
    HOSTS,
    SLOTS,
    Host,
    Network,
    Sampler,
    free_subnet,
    ip,
    start_server,
    stop_server,
    wait_for,
    write_registry,
)
from psycopg import sql

from tickq import db
from tickq.cli.roles import roles_script

# Its namespaces, bridge and subnet are picked at random among the free ones: on one xdist
# worker with test_partition's, so no two builds pick at once.
pytestmark = pytest.mark.xdist_group("netns")


@pytest.fixture
def network() -> Iterator[Network]:
    net = Network(tag=secrets.token_hex(2), subnet=free_subnet())
    try:
        net.build(HOSTS)  # raises (the test fails) where namespaces cannot be made
        yield net
    finally:
        net.tear_down()


def test_three_hosts_hold_the_slot_limit_and_a_dead_hosts_runs_move(network: Network) -> None:
    folder = Path(tempfile.mkdtemp(prefix="tq-hosts-"))  # short: the server's socket lives here
    folder.chmod(0o755)
    hosts: list[Host] = []
    sampler: Sampler | None = None
    server = start_server(folder, network.server_address, f"{network.server_address}/24")
    try:
        # Roles and schema: the administrator and the owner over the local socket.
        db.create_database(db.with_dbname(server.admin_url, "postgres"), DBNAME)
        password = secrets.token_hex(16)
        with db.connect(server.admin_url) as admin:
            admin.execute(roles_script("tq_owner", "tq_dispatcher", "tq_reader"))  # type: ignore
            admin.execute(
                sql.SQL("ALTER ROLE tq_dispatcher PASSWORD {}").format(sql.Literal(password))
            )
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
            passfile.write_text(f"{server.address}:{server.port}:{DBNAME}:tq_dispatcher:{password}\n")
            passfile.chmod(0o600)
            hosts.append(Host(f"host{i}", ns, url, registry, home, passfile))

        sampler = Sampler(server.admin_url, "tq_dispatcher")
        sampler.start()
        for host in hosts:
            host.start()

        with db.connect(server.admin_url) as watch:
            # The host to kill: whichever runs a command once 6 runs went well (which host
            # gets the slots is not promised, so it cannot be chosen in advance).
            def busy_host() -> str | None:
                row = watch.execute(
                    "SELECT split_part(dispatcher, ':', 1) FROM tickq.job_run"
                    " WHERE outcome = 'running' AND kind <> 'tickq.housekeeping'"
                    # started less than half its 0.5 s ago: still running when the kill lands
                    " AND started_at > clock_timestamp() - interval '0.25 seconds'"
                    " AND (SELECT count(*) FROM tickq.job_run WHERE outcome = 'ok') >= 6"
                    " LIMIT 1"
                ).fetchone()
                return row[0] if row else None

            victim_name = wait_for("a host to run a command after 6 runs", busy_host, 20, hosts,
                                   watch)
            victim = next(h for h in hosts if h.name == victim_name)
            victim.stop.set()
            network.kill_all(victim.ns)  # the dispatcher and its commands, at once
            killed_at = time.time()
            ip("link", "del", f"tq{network.tag}v{hosts.index(victim) + 1}")  # and its network
            ip("netns", "del", victim.ns)
            victim.join(timeout=10)

            def lost_runs_retried() -> list[tuple] | None:
                rows = watch.execute(
                    """
                    SELECT lost.id, lost.kind, retry.dispatcher, retry.outcome::text
                    FROM tickq.job_run AS lost
                    LEFT JOIN LATERAL (
                        SELECT r.dispatcher, r.outcome FROM tickq.job_run AS r
                        WHERE r.kind = lost.kind AND r.id > lost.id ORDER BY r.id LIMIT 1
                    ) AS retry ON true
                    WHERE lost.dispatcher LIKE %s AND lost.outcome IN ('running', 'lost')
                    """,
                    (f"{victim_name}:%",),
                ).fetchall()
                done = rows and all(r[3] == "ok" for r in rows)
                return rows if done else None

            wait_for("the dead host's runs to be lost and retried elsewhere", lost_runs_retried, 20,
                     hosts, watch)
        for host in hosts:
            if host is not victim:
                host.finish()
        sampler.stop.set()
        sampler.join(timeout=10)

        with db.connect(server.admin_url) as conn:
            runs = conn.execute(
                "SELECT id, kind, dispatcher, run_trigger::text, attempt, outcome::text,"
                " extract(EPOCH FROM claimed_at)::float8, extract(EPOCH FROM finished_at)::float8"
                " FROM tickq.job_run WHERE kind <> 'tickq.housekeeping' ORDER BY id"
            ).fetchall()
        summary = check_runs(runs, log.read_text().splitlines(), victim_name, killed_at)
        assert sampler.error is None, sampler.error
        assert len(sampler.busy) > 100 and max(sampler.busy) == SLOTS, sampler.busy[-20:]
        # Each host reached the server from its own address, over its own veth.
        assert sampler.addresses == {network.host_address(i) for i in (1, 2, 3)}, sampler.addresses
        assert most_at_once(hosts) == HOSTS, "the three hosts' ticks never ran at once"
        for host in hosts:
            if host is not victim:
                # 128 + 15: stopped by the SIGTERM at the end; -15: before Python had started.
                stopped = {0, 128 + signal.SIGTERM, -signal.SIGTERM}
                assert set(host.statuses) <= stopped, (host.name, host.statuses, host.output())
        print(f"\n{summary}; busy slot rows sampled {len(sampler.busy)} times, at most "
              f"{max(sampler.busy)}")
    finally:
        for host in hosts:
            host.stop.set()
        if sampler is not None:
            sampler.stop.set()
        network.tear_down()
        stop_server(server)
        shutil.rmtree(folder, ignore_errors=True)


def most_at_once(hosts: list[Host]) -> int:
    """The most hosts with a `tickq tick` running at one moment (from each tick's start and
    end, in the order they came)."""
    events = sorted((at, step) for h in hosts for began, ended in h.ticks
                    for at, step in ((began, 1), (ended, -1)))
    running = most = 0
    for _at, step in events:  # at equal times an end (-1) sorts before a start
        running += step
        most = max(most, running)
    return most


def check_runs(runs: list[tuple], log: list[str], victim: str, killed_at: float) -> str:
    """What ran, from the shared log (ends of killed commands: when their host was killed;
    of commands stopped by SIGTERM at the end: when their run was reported)."""
    starts: dict[int, float] = {}
    ends: dict[int, float] = {}
    hostnames: dict[int, str] = {}
    for line in log:
        run_id, _kind, event, at, hostname = line.split()
        (starts if event == "start" else ends)[int(run_id)] = float(at)
        hostnames[int(run_id)] = hostname
    by_id = {r[0]: r for r in runs}
    assert set(starts) <= set(by_id), "every command that ran was a claimed run"

    intervals = []
    for run_id, start in starts.items():
        _id, kind, dispatcher, _trigger, _attempt, outcome, _claimed, finished = by_id[run_id]
        assert dispatcher.split(":")[0] == hostnames[run_id], "named after the host it ran on"
        if run_id in ends:
            end = ends[run_id]
        elif dispatcher.startswith(f"{victim}:"):
            assert outcome == "lost", by_id[run_id]
            end = killed_at
        else:
            assert outcome == "interrupted", by_id[run_id]
            end = finished
        intervals.append((start, end, kind, run_id))

    per_kind: dict[str, list[tuple[float, float, int]]] = defaultdict(list)
    for start, end, kind, run_id in intervals:
        per_kind[kind].append((start, end, run_id))
    overlaps = []
    for kind, spans in per_kind.items():
        spans.sort()
        overlaps += [(kind, a[2], b[2]) for a, b in zip(spans, spans[1:], strict=False)
                     if b[0] < a[1]]
    assert overlaps == [], f"a kind ran twice at once: {overlaps}"

    events = sorted([(s, 1) for s, _e, _k, _r in intervals]
                    + [(e, -1) for _s, e, _k, _r in intervals])
    running = most = 0
    for _at, step in events:  # at equal times an end (-1) sorts before a start
        running += step
        most = max(most, running)
    assert most == SLOTS, f"at most {most} commands ran at once on {SLOTS} slots"

    # Which host gets the slots is not promised (a tick refills the slots it frees in the same
    # transaction, so a busy host tends to keep them): the killed host and one other did run.
    per_host = Counter(d.split(":")[0] for _i, _k, d, *_ in runs)
    assert victim in per_host and len(per_host) >= 2, per_host
    lost = [r for r in runs if r[5] == "lost"]
    assert lost and all(r[2].startswith(f"{victim}:") for r in lost), lost
    moved_after = 0.0
    for run_id, kind, _d, _t, attempt, _o, _c, finished in lost:
        retry = next(r for r in runs if r[1] == kind and r[0] > run_id)
        assert retry[3] == "retry" and retry[4] == attempt + 1, retry
        assert retry[2].split(":")[0] != victim, (
            "a lost run is retried by another host", retry)
        assert retry[6] >= finished, "only after the lease ran out"
        moved_after = max(moved_after, starts[retry[0]] - killed_at)
    return (f"{len(starts)} commands (runs per host {dict(sorted(per_host.items()))}), "
            f"at most {most} at once on {SLOTS} slots, "
            f"0 overlaps; {len(lost)} runs of {victim} (killed) lost and run elsewhere "
            f"{moved_after:.1f} s after the kill")
