"""`tickq check` and `tickq simulate` only read the user's queue: as sql/roles.sql's dispatcher or
reader (no CREATEDB, no right on a table), they print exactly what a check printed when it
synced the registry into the queue itself (in a transaction it rolled back) and simulated in
scratch databases on the queue's server. The scratch databases are made where TICKQ_SCRATCH_URL
says (here the test server as its superuser; else the embedded PostgreSQL); when none can be
made, the check says so, with an exit status of its own (4), never "cannot reach the database".

The roles are made by `tickq roles print` in a fresh database of the test server
(tests_py/dbroles.py); the history the capacity and `--durations observed` read is
runs written into job_run as the superuser.
"""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

from dbroles import Roles
from processes import tickq, tickq_env

from tickq import db
from tickq.check import simulate
from tickq.cli import check as cli_check
from tickq.db.api import check as api
from tickq.db.api import registry as registry_api
from tickq.db.api import session
from tickq.registry import load_registry

REPO = Path(__file__).resolve().parent.parent
BURST = REPO / "examples" / "starvation" / "burst.toml"

WITH_AGENTS = """\
[settings]
slots = 1
stale_after = "15m"

[kinds.tidy]
command = ["true"]
every = "1h"
timeout = "1m"

[agents]
base_url = "http://127.0.0.1:9/v1"
model = "m"
priority = "low"
"""


def today(admin_url: str, server: str, path: Path, durations: str) -> str:
    """What `tickq check` printed before it judged in a scratch database: the capacity of the
    registry synced into the queue itself in a transaction rolled back (the queue's agents
    paused there when the registry has no [agents]), the queue's history and agents read, the
    worst case simulated in scratch databases on the queue's server."""
    registry = load_registry(path)
    with db.connect(admin_url) as conn:
        with conn.transaction(force_rollback=True):
            registry_api.sync_registry(conn, registry)
            if registry.agents is None:
                for agent in api.live_agents(conn):
                    session.rows(conn, "pause_agent", {"name": agent.name})
            report = api.CapacityReport(
                kinds=[api.KindCapacity(**r) for r in session.rows(conn, "capacity")],
                lanes=[api.LaneCapacity(**r) for r in session.rows(conn, "capacity_total")],
                verdict=api.CapacityVerdict(**session.rows(conn, "capacity_verdict")[0]))
        agents = api.live_agents(conn) if registry.agents is not None else []
        seen = api.observed_durations(conn) if durations == "observed" else None
    worst = simulate.worst_case(server, registry, seen, agents)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        cli_check._print_capacity(report)
        cli_check._print_worst_case(worst, registry, durations)
    return printed.getvalue()


def history(admin_url: str, kinds: str, seconds: int, runs: int = 6) -> None:
    """`runs` successful runs of `seconds` each for every kind whose name is LIKE `kinds`."""
    with db.connect(admin_url) as conn:
        conn.execute("""
            INSERT INTO tickq.job_run (kind, attempt, run_trigger, dispatcher, claimed_at,
                                       finished_at, outcome, duration)
            SELECT k.name, 1, 'schedule', 'd', now() - interval '1 hour',
                   now() - interval '1 hour', 'ok', %s * interval '1 second'
            FROM tickq.job_kind AS k, generate_series(1, %s)
            WHERE k.name LIKE %s
        """, (seconds, runs, kinds))


def assert_as_today(roles: Roles, server: str, path: Path, *more: str) -> list[str]:
    """`tickq check` of `path` as the dispatcher and as the reader prints what today's check
    printed; the windows start on today's date, so a round that fell either side of midnight
    is run again. The outputs."""
    durations = "observed" if "observed" in more else "timeout"
    for _ in range(2):
        expected = today(roles.admin_url, server, path, durations)
        outputs = [tickq("check", "--registry", str(path), *more, "--database-url",
                         roles.url(role)) for role in (roles.dispatcher, roles.reader)]
        if today(roles.admin_url, server, path, durations) == expected:
            break
    for done in outputs:
        assert "Traceback" not in done.stderr, done.stderr
        assert done.stdout == expected, done.stdout + done.stderr
    return [done.stdout for done in outputs]


def test_check_as_the_dispatcher_or_the_reader_prints_what_todays_check_printed(
    roles: Roles, pg_server_url: str
) -> None:
    owner = roles.url(roles.owner)
    assert tickq("migrate", "--database-url", owner).returncode == 0
    done = tickq("sync", "--registry", str(BURST), "--database-url", roles.url(roles.dispatcher))
    assert done.returncode == 0, done.stderr
    assert "worst case STARVES" in assert_as_today(roles, pg_server_url, BURST)[0]
    # The queue knows the hourly kinds take half a minute, not their quarter of an hour: the
    # capacity's expected durations and the observed worst case follow its history.
    history(roles.admin_url, "hourly_%", 30)
    printed = assert_as_today(roles, pg_server_url, BURST, "--durations", "observed")[0]
    assert "p95 of 6 runs" in printed and "worst case fits" in printed, printed


def test_the_queues_agents_are_read_and_judged_as_today(
    roles: Roles, pg_server_url: str, tmp_path: Path
) -> None:
    # A registry with [agents]: the queue's agents are read (agents_export, the reader's too)
    # and judged beside its kinds, in their lane.
    assert tickq("migrate", "--database-url", roles.url(roles.owner)).returncode == 0
    agents = tmp_path / "agents.toml"
    agents.write_text(WITH_AGENTS)
    for name in ("brief", "digest"):
        done = tickq("agent", "add", name, "--prompt", "-", "--every", "5m", "--registry",
                     str(agents), "--database-url", roles.url(roles.dispatcher),
                     input="Summarise the day")
        assert done.returncode == 0, done.stderr
    history(roles.admin_url, "agent.brief", 20)
    printed = assert_as_today(roles, pg_server_url, agents, "--durations", "observed")[0]
    assert "agent.brief" in printed and "agent.digest" in printed, printed


def test_simulate_as_the_reader_replays_from_the_queues_history(
    roles: Roles, tmp_path: Path
) -> None:
    assert tickq("migrate", "--database-url", roles.url(roles.owner)).returncode == 0
    assert tickq("sync", "--registry", str(BURST), "--database-url",
                 roles.url(roles.dispatcher)).returncode == 0
    reader = roles.url(roles.reader)
    worst = tickq("simulate", "--registry", str(BURST), "--hours", "3", "--database-url", reader)
    assert worst.returncode == 1 and "starving lanes: normal" in worst.stdout, worst
    history(roles.admin_url, "hourly_%", 30)
    seen = tickq("simulate", "--registry", str(BURST), "--hours", "3", "--durations", "observed",
                 "--database-url", reader)
    assert seen.returncode == 0 and "no kind waited longer" in seen.stdout, seen


def test_no_scratch_database_is_named_so_with_an_exit_status_of_its_own(roles: Roles) -> None:
    assert tickq("migrate", "--database-url", roles.url(roles.owner)).returncode == 0
    dispatcher = roles.url(roles.dispatcher)
    # The scratch server named is the queue's own, as the dispatcher, who may not create a
    # database: the queue was read all the same, and the failure is the scratch database's.
    for command in (["check"], ["simulate", "--hours", "1"]):
        done = tickq(*command, "--registry", str(BURST), "--database-url", dispatcher,
                     env=tickq_env(TICKQ_SCRATCH_URL=dispatcher))
        assert done.returncode == 4, done
        assert done.stderr.strip().splitlines() == [
            "tickq: cannot create a scratch database for the simulation: permission denied to "
            "create database"], done.stderr
        assert done.stdout == ""
