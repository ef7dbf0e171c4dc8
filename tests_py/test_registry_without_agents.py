"""Two dispatchers on one queue, one whose registry has no [agents] section: real `tickq tick`
processes, the real agent runner and a scripted chat-completions server on 127.0.0.1.

A registry that says nothing about agents neither runs them nor changes their caps: its
dispatcher leaves an agent's run to the one whose registry can run it (no failed run, no
failure streak, no alert), and its sync keeps the caps the [agents] section set."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import psycopg
from chat_server import ChatServer, answer
from test_agents import last_run, save_agent, tick, write_registry

REPO = Path(__file__).resolve().parent.parent
SETTINGS = '[settings]\nslots = 2\nlease_margin = "1m"\n'
KINDS = '\n[kinds.hello]\ncommand = ["true"]\nevery = "1h"\ntimeout = "30s"\n'


def plain_registry(folder: Path) -> Path:
    """The settings of test_agents.write_registry's and one kind, without [agents]."""
    folder.mkdir()
    path = folder / "registry.toml"
    path.write_text(SETTINGS + KINDS)
    return path


def agents_registry(folder: Path, base_url: str, **agents: object) -> Path:
    """test_agents.write_registry's, with the same kind as plain_registry's."""
    folder.mkdir()
    path = write_registry(folder, base_url, **agents)
    path.write_text(path.read_text() + KINDS)
    return path


def agent_rows(db_url: str) -> dict[str, object]:
    agent = "kind LIKE 'agent.%'"
    with psycopg.connect(db_url, autocommit=True) as conn:
        def one(query: str) -> tuple:
            return conn.execute(query).fetchone()
        runs = one(f"SELECT count(*) FROM tickq.job_run WHERE {agent}")  # noqa: S608
        failed = one(f"SELECT count(*) FROM tickq.job_run WHERE {agent}"  # noqa: S608
                     " AND outcome IS DISTINCT FROM 'ok'")
        alerts = one(f"SELECT count(*) FROM tickq.alert WHERE {agent}")  # noqa: S608
        kind = one("SELECT attempts, run_id, due_at <= now() FROM tickq.job_kind"
                   " WHERE name = 'agent.brief'")
        caps = one("SELECT priority::text, max_turns, extract(epoch FROM max_timeout)::int,"
                   " retries, tools FROM tickq.agent_settings")
        lane = one("SELECT priority::text, extract(epoch FROM timeout)::int, retries"
                   " FROM tickq.job_kind WHERE name = 'agent.brief'")
    return {"runs": runs[0], "failed": failed[0], "alerts": alerts[0], "attempts": kind[0],
            "leased": kind[1] is not None, "due": kind[2], "caps": caps, "lane": lane}


def test_an_agent_runs_only_on_the_dispatcher_whose_registry_has_agents(tmp_path: Path,
                                                                       db_url: str):
    plain = plain_registry(tmp_path / "plain")
    with ChatServer([answer("Three deals need a call today.")]) as server:
        with_agents = agents_registry(tmp_path / "agents", server.base_url)
        save_agent(db_url, with_agents, "brief", tools=["search_crm"])
        for n in range(2):  # every tick of the plain dispatcher leaves it alone
            done = tick(plain, db_url, f"plain-{n}")
            assert done.returncode == 0, done.stderr
            assert "no [agents] section" not in done.stdout + done.stderr
            left = agent_rows(db_url)
            assert (left["runs"], left["attempts"], left["leased"], left["due"]) == (
                0, 0, False, True), left
        assert server.requests == []
        done = tick(with_agents, db_url, "agents")
    assert done.returncode == 0, done.stderr
    run = last_run(db_url, "brief")
    assert run["outcome"] == "ok", run["output_tail"]
    assert run["output_tail"] == "Three deals need a call today.\n"
    after = agent_rows(db_url)
    assert (after["runs"], after["failed"], after["alerts"], after["attempts"]) == (1, 0, 0, 0)


def test_a_sync_without_agents_keeps_their_caps(tmp_path: Path, db_url: str):
    plain = plain_registry(tmp_path / "plain")
    with_agents = agents_registry(tmp_path / "agents", "http://127.0.0.1:9/v1", priority="high",
                                 max_turns=3, timeout="2m", retries=1)
    save_agent(db_url, with_agents, "brief", tools=["search_crm"], timeout=100,
               every=86400)
    set_by_agents = {"caps": ("high", 3, 120, 1, ["patient", "search_crm", "slow"]),
                     "lane": ("high", 100, 1)}
    before = agent_rows(db_url)
    assert {k: before[k] for k in set_by_agents} == set_by_agents
    done = tick(plain, db_url, "plain")
    assert done.returncode == 0, done.stderr
    after = agent_rows(db_url)
    assert {k: after[k] for k in set_by_agents} == set_by_agents


def test_a_manual_run_of_an_agent_from_a_registry_without_agents_is_refused(tmp_path: Path,
                                                                            db_url: str):
    plain = plain_registry(tmp_path / "plain")
    with_agents = agents_registry(tmp_path / "agents", "http://127.0.0.1:9/v1")
    save_agent(db_url, with_agents, "brief", tools=["search_crm"])
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "TICKQ_REGISTRY")}
    env["PYTHONPATH"] = str(REPO / "python_runner")
    done = subprocess.run(
        [sys.executable, "-m", "tickq", "run", "agent.brief", "--registry", str(plain),
         "--database-url", db_url],
        cwd=plain.parent, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines()[-1] == (
        f"tickq: agent.brief is an agent, but {plain} has no [agents] section: run it from a "
        "registry that has one (or let a dispatcher whose registry has one claim it)")
    assert agent_rows(db_url)["runs"] == 0
