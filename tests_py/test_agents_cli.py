"""`tickq agent ...` as a person uses it: real CLI processes on a fresh database, a real model
server on 127.0.0.1 for `agent run`."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import psycopg
from chat_server import ChatServer, answer, tool_call
from test_agents import KEY, KEY_ENV, save_agent, write_registry

REPO = Path(__file__).resolve().parent.parent


def tickq(folder: Path, db_url: str, *args: str, stdin: str | None = None):
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "TICKQ_REGISTRY")}
    env |= {KEY_ENV: KEY, "PYTHONPATH": str(REPO / "python_runner")}
    return subprocess.run(
        [sys.executable, "-m", "tickq", "agent", *args, "--registry", str(folder / "registry.toml"),
         "--database-url", db_url],
        cwd=folder, env=env, input=stdin, capture_output=True, text=True, timeout=60,
    )


def test_add_show_list_edit_pause_run_history_remove(tmp_path: Path, db_url: str):
    script = [tool_call("search_crm", {"query": "acme"}), answer("Acme: 3 deals.")]
    with ChatServer(script) as server:
        write_registry(tmp_path, server.base_url)

        added = tickq(tmp_path, db_url, "add", "morning-brief", "--prompt", "-", "--at", "07:30",
                      "--on", "mon-fri", "--timezone", "America/Chicago", "--tools", "search_crm",
                      "--owner", "ana", stdin="Brief me on the CRM.\nKeep it short.\n")
        assert added.returncode == 0, added.stderr
        out = added.stdout
        assert "added agent morning-brief" in out and "kind agent.morning-brief" in out
        assert "at 07:30 on mon-fri America/Chicago" in out
        assert "'Brief me on the CRM.'... (36 characters)" in out
        # The next five runs, each at 07:30 in Chicago on a weekday, and the same instant in UTC:
        # 13:30 in winter (CST), 12:30 in summer (CDT).
        runs = re.findall(r"^  (\w{3}) (\S+) 07:30 America/Chicago   (\w{3}) \2 (\d\d):30 UTC$",
                          out, re.M)
        assert len(runs) == 5, out
        assert all(day not in ("Sat", "Sun") and hour in ("12", "13") for day, _, _, hour in runs)

        with psycopg.connect(db_url, autocommit=True) as conn:
            prompt = conn.execute("SELECT prompt FROM tickq.agent").fetchone()[0]
        assert prompt == "Brief me on the CRM.\nKeep it short.\n"

        bad = tickq(tmp_path, db_url, "add", "other", "--prompt", "x", "--every", "1h",
                    "--turns", "7")
        assert bad.returncode == 2
        assert bad.stderr == ("tickq: agent 'other': max_turns: turns must be a whole number "
                              "from 1 to 6, got 7\n")
        taken = tickq(tmp_path, db_url, "add", "morning-brief", "--prompt", "x", "--every", "1h")
        assert taken.returncode == 1 and "already exists" in taken.stderr
        unknown_tool = tickq(tmp_path, db_url, "edit", "morning-brief", "--tools", "shell")
        assert unknown_tool.returncode == 2 and "has no tool 'shell'" in unknown_tool.stderr

        edited = tickq(tmp_path, db_url, "edit", "morning-brief", "--turns", "3",
                       "--timeout", "45s")
        assert edited.returncode == 0, edited.stderr
        assert re.search(r"^turns\s+3$", edited.stdout, re.M)
        assert re.search(r"^timeout\s+45s$", edited.stdout, re.M)

        paused = tickq(tmp_path, db_url, "pause", "morning-brief")
        assert paused.returncode == 0, paused.stderr
        listed = tickq(tmp_path, db_url, "list")
        assert re.search(r"^morning-brief\s+at 07:30 .*\s+paused\s+3\s+45s\s+ana\s+search_crm",
                         listed.stdout, re.M), listed.stdout
        assert tickq(tmp_path, db_url, "resume", "morning-brief").returncode == 0

        ran = tickq(tmp_path, db_url, "run", "morning-brief")
        assert ran.returncode == 0, ran.stderr
        assert ran.stdout == "Acme: 3 deals.\n"

        history = tickq(tmp_path, db_url, "history", "morning-brief")
        assert history.returncode == 0, history.stderr
        row = re.search(r"^(\d+)\s+\S+ \S+\s+manual\s+ok\s+2\s+", history.stdout, re.M)
        assert row, history.stdout
        transcript = tickq(tmp_path, db_url, "history", "morning-brief", "--run", row.group(1))
        assert transcript.returncode == 0, transcript.stderr
        assert 'tool search_crm {"query": "acme"} -> ok' in transcript.stdout
        assert "| 3 open deals for acme" in transcript.stdout
        assert "answer:\n    Acme: 3 deals." in transcript.stdout

        removed = tickq(tmp_path, db_url, "remove", "morning-brief")
        assert removed.returncode == 0, removed.stderr
        gone = tickq(tmp_path, db_url, "show", "morning-brief")
        assert gone.returncode == 1 and gone.stderr.count("\n") == 1
    with psycopg.connect(db_url, autocommit=True) as conn:
        retired = conn.execute("SELECT retired_at IS NOT NULL FROM tickq.job_kind"
                               " WHERE name = 'agent.morning-brief'").fetchone()[0]
    assert retired


def test_the_example_runs_end_to_end_without_network_or_key(tmp_path: Path, db_url: str):
    folder = tmp_path / "agents"
    shutil.copytree(REPO / "examples" / "agents", folder)
    server = subprocess.Popen([sys.executable, str(folder / "bin" / "fake-model-server"),
                               "--port", "0"], stdout=subprocess.PIPE, text=True)
    try:
        base_url = server.stdout.readline().split()[-1]
        registry = folder / "registry.toml"
        registry.write_text(registry.read_text().replace("http://127.0.0.1:8765/v1", base_url))
        added = tickq(folder, db_url, "add", "notes-digest", "--prompt",
                      "Summarise what the notes say about Acme", "--every", "1d",
                      "--tools", "search_notes")
        assert added.returncode == 0, added.stderr
        ran = tickq(folder, db_url, "run", "notes-digest")
    finally:
        server.terminate()
        server.wait(10)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout == ("From the notes:\nAcme renewal call moved to Thursday.\n"
                          "Acme wants the new pricing sheet.\n")
    delivered = json.loads((folder / "delivered.jsonl").read_text().splitlines()[0])
    assert delivered["agent"] == "notes-digest" and delivered["answer"] == ran.stdout


def test_simulate_counts_the_queues_agents(tmp_path: Path, db_url: str):
    registry = write_registry(tmp_path, "http://127.0.0.1:9/v1")
    save_agent(db_url, registry, "hourly", every=3600, timeout=60)
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    env["PYTHONPATH"] = str(REPO / "python_runner")
    done = subprocess.run(
        [sys.executable, "-m", "tickq", "simulate", "--hours", "3", "--registry", str(registry),
         "--database-url", db_url], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    row = re.search(r"^agent\.hourly\s+normal\s+(\d+)\s", done.stdout, re.M)
    assert row and int(row.group(1)) >= 3, done.stdout


def test_on_passes_its_days_to_the_database_which_reads_ranges(tmp_path: Path, db_url: str):
    """--on takes what the registry's `on` takes, judged by the database alone: a range (past
    sunday it wraps), beside an nth weekday; a word that is no day, or a day twice, is refused
    in one line naming the key."""
    write_registry(tmp_path, "http://127.0.0.1:9")
    added = tickq(tmp_path, db_url, "add", "late-week", "--prompt", "x", "--at", "18:00",
                  "--on", "Fri-Mon, 1st  wed", "--timezone", "UTC")
    assert added.returncode == 0, added.stderr
    assert "at 18:00 on mon,fri-sun,1st wed UTC" in added.stdout, added.stdout
    for on, words in (("mon-fry", "ranges of them (mon-fri)"),
                      ("mon-fri,wed", 'days must not repeat, got ["mon-fri", "wed"]')):
        bad = tickq(tmp_path, db_url, "edit", "late-week", "--on", on)
        assert bad.returncode == 2, bad.stderr
        assert bad.stderr.startswith("tickq: agent 'late-week': on: ") and words in bad.stderr
        assert bad.stderr.count("\n") == 1, bad.stderr
