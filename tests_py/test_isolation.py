"""One kind cannot stop the others: a kind whose folder is missing fails its own run, and a kind
row another session holds locked is left for the next tick while the other kinds run. Real CLI,
real PostgreSQL, real row locks."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import psycopg
import pytest

from tickq.db.api import registry as registry_api
from tickq.host import programs
from tickq.host.spool import Spool
from tickq.registry import load_registry, parse_registry

REPO = Path(__file__).resolve().parent.parent


def tickq(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("DATABASE_URL", "TICKQ_REGISTRY", "TICKQ_LOG_FORMAT")}
    env["PYTHONPATH"] = str(REPO / "python_runner")
    return subprocess.run([sys.executable, "-m", "tickq.cli", *args], env=env, cwd=cwd,
                          capture_output=True, text=True, timeout=120, check=False)


def last_runs(db_url: str) -> dict[str, tuple[str, str]]:
    """Each kind's latest run: (outcome, output_tail)."""
    with psycopg.connect(db_url) as c:
        rows = c.execute("SELECT DISTINCT ON (kind) kind, outcome::text, coalesce(output_tail, '')"
                         " FROM tickq.job_run ORDER BY kind, id DESC").fetchall()
    return {kind: (outcome, tail) for kind, outcome, tail in rows}


MISSING_CWD = """\
[kinds.good]
command = ["sh", "-c", "echo good ran"]
every = "1h"
timeout = "30s"

[kinds.bad]
command = ["sh", "-c", "echo bad ran"]
cwd = "nowhere"
every = "1h"
timeout = "30s"
"""


def test_a_kind_whose_cwd_is_missing_fails_alone(tmp_path: Path, db_url: str) -> None:
    (tmp_path / "registry.toml").write_text(MISSING_CWD)
    done = tickq("tick", "--registry", "registry.toml", "--database-url", db_url,
                 cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    runs = last_runs(db_url)
    assert runs["good"][0] == "ok", runs
    assert "good ran" in runs["good"][1]
    outcome, note = runs["bad"]
    assert outcome == "failed", runs
    assert str(tmp_path / "nowhere") in note, note
    assert "bad ran" not in note
    # The tick said why, too, and `check` still names the kind and its folder.
    assert "nowhere" in done.stderr + done.stdout
    checked = tickq("check", "--registry", "registry.toml", "--database-url", db_url,
                    cwd=tmp_path)
    assert checked.returncode == 1, checked.stdout + checked.stderr
    named = [ln for ln in checked.stderr.splitlines() if "'bad'" in ln and "nowhere" in ln]
    assert named, checked.stderr


def test_a_step_whose_cwd_is_missing_fails_its_chain_alone(tmp_path: Path, db_url: str) -> None:
    (tmp_path / "registry.toml").write_text(MISSING_CWD.replace(
        'command = ["sh", "-c", "echo bad ran"]\ncwd = "nowhere"\n',
        'steps = [{ name = "one", command = ["sh", "-c", "echo bad ran"], cwd = "nowhere",'
        ' timeout = "10s" }]\n'))
    done = tickq("tick", "--registry", "registry.toml", "--database-url", db_url,
                 cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    runs = last_runs(db_url)
    assert runs["good"][0] == "ok", runs
    assert runs["bad"][0] == "failed", runs


LOCKED = """\
[settings]
slots = 2
db_lock_timeout = "2s"

[kinds.a]
command = ["sh", "-c", "echo a ran"]
every = "1h"
timeout = "30s"

[kinds.b]
command = ["sh", "-c", "echo b ran"]
every = "1h"
timeout = "30s"
"""


@pytest.mark.parametrize("first", ["synced", "edited"])
def test_a_kind_row_locked_by_another_session_is_skipped(
    tmp_path: Path, db_url: str, first: str
) -> None:
    registry = tmp_path / "registry.toml"
    registry.write_text(LOCKED)
    synced = tickq("sync", "--registry", "registry.toml", "--database-url", db_url,
                   cwd=tmp_path)
    assert synced.returncode == 0, synced.stderr
    if first == "edited":  # the sync has something to write to the locked row, and to b's
        registry.write_text(LOCKED.replace('timeout = "30s"', 'timeout = "40s"'))
    with psycopg.connect(db_url) as holder:
        # A person's psql left open in a transaction.
        holder.execute("SELECT * FROM tickq.job_kind WHERE name = 'a' FOR UPDATE")
        done = tickq("tick", "--registry", "registry.toml", "--database-url", db_url,
                     cwd=tmp_path)
        holder.rollback()
    assert done.returncode == 0, done.stderr
    runs = last_runs(db_url)
    assert runs.get("b", ("",))[0] == "ok", runs
    assert "a" not in runs, runs
    warned = [ln for ln in (done.stderr + done.stdout).splitlines()
              if "warning" in ln.lower() and re.search(r"\bkind[= ]['\"]?a\b", ln)]
    # A sync that has something to write to the held row skips it and says so; an unchanged
    # registry's sync writes nothing (its digest), so only the claim meets the row, and a claim
    # passes a held row by (SKIP LOCKED) as it passes one another dispatcher is claiming.
    assert len(warned) == (1 if first == "edited" else 0), done.stderr + done.stdout
    # The next tick, with nothing held, syncs and runs it.
    again = tickq("tick", "--registry", "registry.toml", "--database-url", db_url,
                  cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert last_runs(db_url)["a"][0] == "ok"
    if first == "edited":
        with psycopg.connect(db_url) as c:
            timeouts = dict(c.execute("SELECT name, extract(epoch FROM timeout)::int FROM "
                                      "tickq.job_kind WHERE name IN ('a', 'b')").fetchall())
        assert timeouts == {"a": 40, "b": 40}


def test_a_spooled_result_of_a_locked_kind_waits_in_the_spool(
    tmp_path: Path, db_url: str, own_ledger_folder: Path
) -> None:
    (tmp_path / "registry.toml").write_text(LOCKED)
    synced = tickq("sync", "--registry", "registry.toml", "--database-url", db_url,
                   cwd=tmp_path)
    assert synced.returncode == 0, synced.stderr
    with psycopg.connect(db_url, autocommit=True) as c:
        # A run of a claimed by a dispatcher that kept its result through an outage.
        [(run_id,)] = c.execute("SELECT run_id FROM tickq.claim_manual('a', 'old-host:1')")
        c.execute("SELECT tickq.start_run(%s, 'old-host:1')", (run_id,))
    kept = Spool(own_ledger_folder).save({
        "run_id": run_id, "kind": "a", "dispatcher": "old-host:1", "outcome": "ok",
        "exit_code": 0, "output_tail": "a ran before the outage\n", "duration": 0.1})
    with psycopg.connect(db_url) as holder:
        holder.execute("SELECT * FROM tickq.job_kind WHERE name = 'a' FOR UPDATE")
        done = tickq("tick", "--registry", "registry.toml", "--database-url", db_url,
                     cwd=tmp_path)
        holder.rollback()
    assert done.returncode == 0, done.stderr
    assert kept.exists(), "the result stays for the next tick"
    assert last_runs(db_url)["b"][0] == "ok"
    assert "run.late_report_deferred" in done.stdout + done.stderr
    again = tickq("tick", "--registry", "registry.toml", "--database-url", db_url,
                  cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert not kept.exists()
    assert last_runs(db_url)["a"] == ("ok", "a ran before the outage\n")


def test_a_row_held_for_an_instant_is_waited_for_not_skipped(
    tmp_path: Path, conn: psycopg.Connection, db_url: str
) -> None:
    """Another dispatcher's claim or report holds a kind row for milliseconds: the sync waits
    for it (up to a quarter of a second) rather than warn about it."""
    registry = load_registry(_write(tmp_path, LOCKED.replace('"30s"', '"40s"')))
    registry_api.sync_registry(conn, load_registry(_write(tmp_path, LOCKED)))
    with psycopg.connect(db_url) as holder:
        holder.execute("SELECT * FROM tickq.job_kind WHERE name = 'a' FOR UPDATE")
        threading.Timer(0.1, holder.rollback).start()
        drift = registry_api.sync_registry(conn, registry)
    assert sorted((d.kind, d.field) for d in drift) == [("a", "timeout"), ("b", "timeout")]


def _write(folder: Path, text: str) -> Path:
    (folder / "registry.toml").write_text(text)
    return folder / "registry.toml"


def test_a_held_kind_gone_from_the_registry_is_retired_by_a_later_sync(
    tmp_path: Path, conn: psycopg.Connection, db_url: str
) -> None:
    registry_api.sync_registry(conn, load_registry(_write(tmp_path, LOCKED)))
    without_a = load_registry(_write(tmp_path, LOCKED[:LOCKED.index("[kinds.a]")]
                                     + LOCKED[LOCKED.index("[kinds.b]"):]))
    with psycopg.connect(db_url) as holder:
        holder.execute("SELECT * FROM tickq.job_kind WHERE name = 'a' FOR UPDATE")
        drift = registry_api.sync_registry(conn, without_a)
        holder.rollback()
    assert [(d.kind, d.field) for d in drift] == [("a", "locked")]
    assert [(d.kind, d.field) for d in registry_api.sync_registry(conn, without_a)] == [
        ("a", "kind")]
    assert conn.execute("SELECT count(*) FROM tickq.drift WHERE field = 'locked'"
                        ).fetchone() == (0,)


def test_an_agent_tools_missing_cwd_is_named_not_refused(tmp_path: Path) -> None:
    (tmp_path / "there").mkdir()
    registry = parse_registry(MISSING_CWD.replace('cwd = "nowhere"\n', "") + textwrap.dedent("""
        [agents]
        base_url = "http://127.0.0.1:1/v1"
        model = "m"

        [agents.tools.search]
        command = ["sh", "-c", "cat"]
        description = "Search"
        cwd = "gone"

        [agents.tools.here]
        command = ["sh", "-c", "cat"]
        description = "Here"
        cwd = "there"
        """), str(tmp_path / "registry.toml"), tmp_path)
    found = programs.problems(registry)
    assert len(found) == 1 and "agents.tools.search" in found[0], found
    assert str(tmp_path / "gone") in found[0]
