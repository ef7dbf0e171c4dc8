"""One tick through one door: every connection a tick opens (its own, a chain's, the agent
lookup's, the housekeeping's, the agent runner's, the status page's) carries the registry's
database timeouts, seen from the server; the database judges the registry before the tick uses a
value of it; an agent run starts without the command line; and the rooms above tickq/db never
reach for psycopg themselves.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest
from chat_server import ChatServer, answer
from test_agents import REPO, save_agent, tick, write_registry

SOURCE = REPO / "python_runner" / "tickq"

# Seen by the server at each login (an event trigger, PostgreSQL 17 and later): the session's
# timeouts as the connection's startup options set them, before any statement of tickq runs.
WATCH_LOGINS = """
CREATE TABLE public.login_seen (
    pid integer, statement_timeout text, lock_timeout text, application text
);
CREATE FUNCTION public.note_login() RETURNS event_trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO public.login_seen VALUES (pg_backend_pid(), current_setting('statement_timeout'),
        current_setting('lock_timeout'), current_setting('application_name'));
END $$;
CREATE EVENT TRIGGER note_login ON login EXECUTE FUNCTION public.note_login();
"""

KINDS = """
[kinds.plain]
command = ["true"]
every = "1h"
timeout = "30s"

[kinds.chain]
every = "1h"
timeout = "1m"

[[kinds.chain.steps]]
name = "one"
command = ["true"]
timeout = "10s"

[[kinds.chain.steps]]
name = "two"
command = ["true"]
timeout = "10s"
"""


def test_every_connection_of_a_tick_carries_the_registrys_timeouts(
    tmp_path: Path, db_url: str
) -> None:
    with psycopg.connect(db_url, autocommit=True) as watch:
        if watch.info.server_version < 170000:
            pytest.skip("login event triggers need PostgreSQL 17")
        with ChatServer([answer("Three open deals.")]) as server:
            path = write_registry(tmp_path, server.base_url)
            text = path.read_text().replace("[settings]\n", (
                '[settings]\ndb_statement_timeout = "7s"\ndb_lock_timeout = "3s"\n'
                'housekeeping_timeout = "45s"\nreport_html = "page.html"\n'), 1)
            path.write_text(text + KINDS)
            save_agent(db_url, path, "scout")
            watch.execute(WATCH_LOGINS)  # this connection logged in before: never counted
            done = tick(path, db_url, "door")
        assert done.returncode == 0, done.stderr
        runs = dict(watch.execute(
            "SELECT kind, outcome::text FROM tickq.job_run ORDER BY id").fetchall())
        seen = watch.execute(
            "SELECT statement_timeout, lock_timeout, count(*) FROM public.login_seen "
            "GROUP BY 1, 2 ORDER BY 3 DESC").fetchall()
    assert runs == {"plain": "ok", "chain": "ok", "agent.scout": "ok",
                    "tickq.housekeeping": "ok"}, done.stderr
    assert (tmp_path / "page.html").exists()
    # The tick's own, the chain's, the agent lookup's, the agent runner's and the page's: at
    # least five logins with the registry's timeouts; the housekeeping's one login runs its SQL
    # under housekeeping_timeout instead, with the registry's lock timeout all the same.
    by_timeouts = {(statement, lock): count for statement, lock, count in seen}
    assert set(by_timeouts) == {("7s", "3s"), ("45s", "3s")}, seen
    assert by_timeouts[("7s", "3s")] >= 5 and by_timeouts[("45s", "3s")] == 1, seen


def test_a_tick_of_zero_seconds_is_refused_by_the_database_before_the_tick_uses_it(
    tmp_path: Path, db_url: str
) -> None:
    path = tmp_path / "registry.toml"
    path.write_text('[settings]\ntick = "0s"\n' + KINDS)
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "TICKQ_REGISTRY")}
    env["PYTHONPATH"] = str(REPO / "python_runner")
    done = subprocess.run(
        [sys.executable, "-m", "tickq", "tick", "--registry", str(path), "--database-url",
         db_url], env=env, capture_output=True, text=True, timeout=120, check=False)
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 2, done.stderr
    assert 'key "settings.tick"' in done.stderr


def test_the_agent_runner_starts_without_the_command_line_and_takes_only_an_id(
    tmp_path: Path,
) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO / "python_runner")}
    loaded = subprocess.run(
        [sys.executable, "-c", "import runpy, sys; sys.argv = ['tickq.agents', '0']\n"
         "try:\n    runpy.run_module('tickq.agents', run_name='__main__')\n"
         "except SystemExit as e:\n"
         "    print(e.code, sorted(m for m in sys.modules if m.startswith('tickq.cli')))"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60, check=False)
    assert loaded.stdout.split() == ["2", "[]"], loaded.stdout + loaded.stderr
    for bad in ("1; touch pwned", "-1", "../1", "1 2", "٣"):
        done = subprocess.run([sys.executable, "-m", "tickq.agents", bad], cwd=tmp_path,
                              env=env, capture_output=True, text=True, timeout=30, check=False)
        assert done.returncode == 2, (bad, done.stderr)
        assert "an agent id is a positive whole number" in done.stderr
    assert not (tmp_path / "pwned").exists()


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names |= {f"{node.module}.{a.name}" for a in node.names}
    return names


@pytest.mark.parametrize("room", ["dispatch", "host", "agents"])
def test_the_rooms_of_a_tick_reach_the_database_through_its_door_only(room: str) -> None:
    for path in sorted((SOURCE / room).rglob("*.py")):
        imported = _imports(path)
        assert not {n for n in imported if n.split(".")[0] == "psycopg"}, path
        assert "tickq.db.connect.connect" not in imported, path
        calls = {ast.unparse(n.func) for n in ast.walk(ast.parse(path.read_text()))
                 if isinstance(n, ast.Call)}
        assert not {c for c in calls if c.endswith("connect") and c != "Link"}, (path, calls)
        if room == "host":  # this machine only: no database at all
            assert not {n for n in imported if n.startswith("tickq.db")}, path


def test_no_room_of_a_tick_imports_the_dispatcher() -> None:
    for path in sorted((SOURCE / "dispatch").glob("*.py")):
        if path.name != "tick.py":
            assert "tickq.dispatch.tick" not in _imports(path), path
