"""Irreversible kinds: never claimed by a schedule until a person's successful run by hand arms
them, even with eight claimers at once; the CLI asks for the kind's name at a terminal, refuses
without one, and a new command disarms the kind.
"""

from __future__ import annotations

import datetime as dt
import itertools
import os
import pty
import pwd
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import psycopg
from psycopg.types.json import Jsonb

REPO = Path(__file__).resolve().parent.parent

REGISTRY = """\
[settings]
slots = 2

[kinds.payout]
command = ["sh", "-c", "echo paid >> payouts.log; [ ! -e fail ]"]
every = "1h"
timeout = "30s"
irreversible = true
legacy = "timeout 30s bin/payout"

[kinds.plain]
command = ["true"]
every = "1h"
timeout = "30s"
"""


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("DATABASE_URL", "TICKQ_REGISTRY", "TICKQ_LOG_FORMAT")}
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(REPO / "python_runner"), os.environ.get("PYTHONPATH")) if p
    )
    return {**env, **extra}


def tickq(registry: Path, db_url: str, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tickq.cli", *args, "--registry", str(registry),
         "--database-url", db_url],
        env=_env(**env), capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
    )


def write(folder: Path, text: str) -> Path:
    path = folder / "registry.toml"
    path.write_text(textwrap.dedent(text))
    return path


def arming(conn: psycopg.Connection) -> tuple:
    return conn.execute(
        "SELECT armed_at IS NOT NULL, armed_by, armed_run_id FROM tickq.job_kind"
        " WHERE name = 'payout'"
    ).fetchone()


def payouts(folder: Path) -> int:
    log = folder / "payouts.log"
    return len(log.read_text().splitlines()) if log.exists() else 0


def test_eight_claimers_never_claim_an_unarmed_irreversible_kind(db_url: str) -> None:
    # A day's timeout: the claimers' clock runs a second ahead at each claim of any of them, so
    # one that a loaded machine holds back between its claim and its report must not find its
    # lease run out (lost) by the others' clock.
    registry = {
        "settings": {"slots": 3},
        "kinds": {
            **{f"pay{i}": {"command": ["x"], "every": 1, "timeout": 86400, "irreversible": True,
                           "priority": "urgent"} for i in range(5)},
            **{f"k{i}": {"command": ["x"], "every": 1, "timeout": 86400,
                         "priority": ("high", "normal", "low")[i % 3]} for i in range(20)},
        },
    }
    with psycopg.connect(db_url, autocommit=True) as setup:
        setup.execute("SELECT * FROM tickq.sync_registry(%s)", (Jsonb(registry),))
        [start] = setup.execute("SELECT now()").fetchone()
    claimed: list[str] = []
    errors: list[BaseException] = []
    enough = threading.Event()
    # One clock for all the claimers, a second further at each claim: the kinds (every second)
    # come due again without waiting for the wall clock.
    seconds = itertools.count(1)

    def worker(name: str) -> None:
        try:
            with psycopg.connect(db_url, autocommit=True) as conn:
                while not enough.is_set():
                    now = start + dt.timedelta(seconds=next(seconds))
                    rows = conn.execute(
                        "SELECT run_id, kind FROM tickq.claim_jobs(3, %s, %s)", (name, now)
                    ).fetchall()
                    for run_id, kind in rows:
                        claimed.append(kind)
                        conn.execute("SELECT * FROM tickq.report_run(%s, %s, 'ok', p_now => %s)",
                                     (run_id, name, now))
                    if len(claimed) >= 300:
                        enough.set()
        except BaseException as exc:  # surfaced below
            errors.append(exc)
            enough.set()

    threads = [threading.Thread(target=worker, args=(f"w{i}",)) for i in range(8)]
    for t in threads:
        t.start()
    enough.wait(timeout=240)
    enough.set()
    for t in threads:
        t.join(timeout=60)
    assert not errors, errors
    assert len(claimed) >= 300, "the claimers did claim the other kinds"
    assert not [k for k in claimed if k.startswith("pay")]
    with psycopg.connect(db_url) as conn:
        assert conn.execute(
            "SELECT count(*) FROM tickq.job_run WHERE kind LIKE 'pay%'").fetchone() == (0,)


def test_a_tick_never_runs_an_unarmed_irreversible_kind(
    tmp_path: Path, db_url: str, conn: psycopg.Connection
) -> None:
    path = write(tmp_path, REGISTRY)
    result = tickq(path, db_url, "tick")
    assert result.returncode == 0, result.stderr
    assert payouts(tmp_path) == 0
    status = tickq(path, db_url, "status")
    line = next(x for x in status.stdout.splitlines() if x.startswith("payout "))
    assert " unarmed " in line


def test_a_manual_run_without_a_terminal_or_the_flag_is_refused_in_one_line(
    tmp_path: Path, db_url: str, conn: psycopg.Connection
) -> None:
    path = write(tmp_path, REGISTRY)
    result = tickq(path, db_url, "run", "payout")
    assert result.returncode == 1
    assert result.stderr.count("\n") == 1, result.stderr
    assert "not a terminal" in result.stderr and "--yes-i-ran-this-by-hand" in result.stderr
    assert payouts(tmp_path) == 0
    assert conn.execute("SELECT count(*) FROM tickq.job_run WHERE kind = 'payout'").fetchone() \
        == (0,)


def test_only_a_successful_run_by_hand_arms_and_a_new_command_disarms(
    tmp_path: Path, db_url: str, conn: psycopg.Connection
) -> None:
    path = write(tmp_path, REGISTRY)
    me = pwd.getpwuid(os.getuid()).pw_name

    # A command sees only its registry env, so the failure is asked for with a file.
    (path.parent / "fail").touch()
    failed = tickq(path, db_url, "run", "payout", "--yes-i-ran-this-by-hand")
    (path.parent / "fail").unlink()
    assert failed.returncode == 1, failed.stderr  # tickq run says no when the run did not end ok
    assert "still unarmed" in failed.stderr
    assert arming(conn) == (False, None, None)

    ok = tickq(path, db_url, "run", "payout", "--yes-i-ran-this-by-hand")
    assert ok.returncode == 0, ok.stderr
    assert "armed for its schedule" in ok.stderr
    run_id = conn.execute("SELECT max(id) FROM tickq.job_run WHERE kind = 'payout'").fetchone()[0]
    assert arming(conn) == (True, me, run_id)
    assert conn.execute("SELECT run_by, run_trigger::text, outcome::text FROM tickq.job_run"
                        " WHERE id = %s", (run_id,)).fetchone() == (me, "manual", "ok")
    assert payouts(tmp_path) == 2

    # Armed: the schedule runs it (due since the sync), and a run by hand needs no question.
    conn.execute("UPDATE tickq.job_kind SET due_at = now() WHERE name = 'payout'")
    assert tickq(path, db_url, "tick").returncode == 0
    assert payouts(tmp_path) == 3
    again = tickq(path, db_url, "run", "payout")
    assert again.returncode == 0, again.stderr
    assert payouts(tmp_path) == 4

    # A new command: disarmed, the drift logged, and the schedule stops running it.
    path.write_text(path.read_text().replace("echo paid", "echo paid twice"))
    synced = tickq(path, db_url, "sync")
    assert synced.returncode == 0, synced.stderr
    assert "field=armed" in synced.stdout or '"armed"' in synced.stdout, synced.stdout
    assert arming(conn) == (False, None, None)
    conn.execute("UPDATE tickq.job_kind SET due_at = now() WHERE name = 'payout'")
    assert tickq(path, db_url, "tick").returncode == 0
    assert payouts(tmp_path) == 4
    assert tickq(path, db_url, "run", "payout").returncode == 1


def _run_at_a_terminal(path: Path, db_url: str, typed: str) -> tuple[int, str]:
    """`tickq run payout` with its stdin on a pseudo-terminal where `typed` is typed."""
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "tickq.cli", "run", "payout", "--registry", str(path),
         "--database-url", db_url],
        env=_env(), stdin=follower, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    os.close(follower)
    os.write(leader, typed.encode() + b"\n")
    try:
        _out, err = proc.communicate(timeout=60)
    finally:
        os.close(leader)
    return proc.returncode, err


def test_at_a_terminal_the_kind_name_must_be_typed_back(
    tmp_path: Path, db_url: str, conn: psycopg.Connection
) -> None:
    path = write(tmp_path, REGISTRY)
    status, err = _run_at_a_terminal(path, db_url, "yes")
    assert status == 1
    assert "not confirmed" in err and "Type the kind's name" in err
    assert payouts(tmp_path) == 0

    status, err = _run_at_a_terminal(path, db_url, "payout")
    assert status == 0, err
    assert payouts(tmp_path) == 1
    assert arming(conn)[0] is True
