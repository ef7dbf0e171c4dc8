"""One kind cannot stop the others: a kind whose folder is missing fails its own run, and a kind
row another session holds locked is left for the next tick while the other kinds run. Real CLI,
real PostgreSQL, real row locks."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import psycopg
import pytest

REPO = Path(__file__).resolve().parent.parent


def tickq(*args: str, cwd: Path) -> tuple[subprocess.CompletedProcess[str], float]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("DATABASE_URL", "TICKQ_REGISTRY", "TICKQ_LOG_FORMAT")}
    env["PYTHONPATH"] = str(REPO / "python_runner")
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "tickq.cli", *args], env=env, cwd=cwd,
                          capture_output=True, text=True, timeout=120, check=False)
    return done, time.monotonic() - started


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
    done, _ = tickq("tick", "--registry", "registry.toml", "--database-url", db_url,
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
    checked, _ = tickq("check", "--registry", "registry.toml", "--database-url", db_url,
                       cwd=tmp_path)
    assert checked.returncode == 1, checked.stdout + checked.stderr
    named = [ln for ln in checked.stderr.splitlines() if "'bad'" in ln and "nowhere" in ln]
    assert named, checked.stderr


def test_a_step_whose_cwd_is_missing_fails_its_chain_alone(tmp_path: Path, db_url: str) -> None:
    (tmp_path / "registry.toml").write_text(MISSING_CWD.replace(
        'command = ["sh", "-c", "echo bad ran"]\ncwd = "nowhere"\n',
        'steps = [{ name = "one", command = ["sh", "-c", "echo bad ran"], cwd = "nowhere",'
        ' timeout = "10s" }]\n'))
    done, _ = tickq("tick", "--registry", "registry.toml", "--database-url", db_url,
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
    synced, _ = tickq("sync", "--registry", "registry.toml", "--database-url", db_url,
                      cwd=tmp_path)
    assert synced.returncode == 0, synced.stderr
    if first == "edited":  # the sync has something to write to the locked row, and to b's
        registry.write_text(LOCKED.replace('timeout = "30s"', 'timeout = "40s"'))
    with psycopg.connect(db_url) as holder:
        # A person's psql left open in a transaction.
        holder.execute("SELECT * FROM tickq.job_kind WHERE name = 'a' FOR UPDATE")
        done, elapsed = tickq("tick", "--registry", "registry.toml", "--database-url", db_url,
                              cwd=tmp_path)
        holder.rollback()
    assert done.returncode == 0, done.stderr
    assert elapsed < 20, elapsed
    runs = last_runs(db_url)
    assert runs.get("b", ("",))[0] == "ok", runs
    assert "a" not in runs, runs
    warned = [ln for ln in (done.stderr + done.stdout).splitlines()
              if "warning" in ln.lower() and re.search(r"\bkind[= ]['\"]?a\b", ln)]
    assert len(warned) == 1, done.stderr + done.stdout
    # The next tick, with nothing held, syncs and runs it.
    again, _ = tickq("tick", "--registry", "registry.toml", "--database-url", db_url,
                     cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert last_runs(db_url)["a"][0] == "ok"
    if first == "edited":
        with psycopg.connect(db_url) as c:
            timeouts = dict(c.execute("SELECT name, extract(epoch FROM timeout)::int FROM "
                                      "tickq.job_kind WHERE name IN ('a', 'b')").fetchall())
        assert timeouts == {"a": 40, "b": 40}
