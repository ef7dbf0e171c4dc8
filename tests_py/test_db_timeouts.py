"""A tick never hangs on the database: a server that accepts TCP and never answers, or another
connection holding a lock the tick needs, ends the tick with exit 3 and one line, within the
registry's db_* timeouts. Real CLI, real sockets, real PostgreSQL locks."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

REPO = Path(__file__).resolve().parent.parent

REGISTRY = """\
[settings]
slots = 1
db_connect_timeout = "2s"
db_statement_timeout = "5s"
db_lock_timeout = "1s"

[kinds.job]
command = ["true"]
every = "1h"
timeout = "30s"
"""


def tickq(*args: str, url: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "TICKQ_REGISTRY")}
    env["PYTHONPATH"] = str(REPO / "python_runner")
    return subprocess.run([sys.executable, "-m", "tickq.cli", *args, "--database-url", url],
                          env=env, capture_output=True, text=True, timeout=120, check=False)


@pytest.fixture
def silent_server() -> Iterator[int]:
    """A TCP server on 127.0.0.1 that accepts every connection and never says a word."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(listener.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield listener.getsockname()[1]
    stop.set()
    thread.join()
    for s in held:
        s.close()
    listener.close()


def test_a_server_that_never_answers_ends_the_tick_with_exit_3(
    tmp_path: Path, silent_server: int
) -> None:
    registry = tmp_path / "registry.toml"
    registry.write_text(REGISTRY)
    # Without the connect timeout the tick would wait for the silent server until tickq()'s own
    # 120 s ran out, and fail the test there.
    done = tickq("tick", "--registry", str(registry),
                 url=f"postgresql://tickq@127.0.0.1:{silent_server}/tickq")
    assert done.returncode == 3, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("tickq: "), done.stderr
    assert "Traceback" not in done.stderr


def test_a_lock_held_by_another_connection_ends_the_tick_with_exit_3(
    tmp_path: Path, db_url: str
) -> None:
    registry = tmp_path / "registry.toml"
    registry.write_text(REGISTRY)
    first = tickq("sync", "--registry", str(registry), url=db_url)
    assert first.returncode == 0, first.stderr
    with psycopg.connect(db_url) as holder:
        # An operator's forgotten transaction: the settings row stays locked.
        holder.execute("SELECT * FROM tickq.settings FOR UPDATE")
        holder.execute("LOCK TABLE tickq.job_kind IN EXCLUSIVE MODE")
        done = tickq("tick", "--registry", str(registry), url=db_url)
        holder.rollback()
    assert done.returncode == 3, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "lock" in lines[0], done.stderr


def test_a_session_silent_inside_a_transaction_lets_go_of_its_locks_at_the_lock_timeout(
    db_url: str,
) -> None:
    """A host cut off from the network between two statements of a transaction (a report and
    the claim after it) says nothing more, and TCP takes hours to notice: the server ends such
    a tickq session after db_lock_timeout, so the rows it locked hold up every other dispatcher
    no longer than a lock may."""
    from tickq import db

    with psycopg.connect(db_url, autocommit=True) as admin:
        admin.execute("UPDATE tickq.settings SET slots = slots")  # the row exists
    with db.connect(db_url, autocommit=False, timeouts=db.Timeouts(lock=1)) as silent:
        silent.execute("UPDATE tickq.settings SET slots = slots")  # locked, then nothing
        # Another dispatcher's statement waits for the row: it gets it once the server ended the
        # silent session (its own statement timeout is far longer: without that end it fails).
        with psycopg.connect(db_url, autocommit=True,
                             options="-c statement_timeout=60000") as other:
            other.execute("UPDATE tickq.settings SET slots = slots")
            ended = other.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE pid = %s", (silent.info.backend_pid,)
            ).fetchone()
        assert ended == (0,)
        with pytest.raises(psycopg.errors.IdleInTransactionSessionTimeout):
            silent.execute("SELECT 1")
