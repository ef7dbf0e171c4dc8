"""What a wake-up is measured with: the environment a command runs in, a registry of kinds
due twelve hours from now, a tick, and the database's own counts of the sessions opened, the
rows written and the plpgsql functions called."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import psycopg

REPO = Path(__file__).resolve().parent.parent


def env() -> dict[str, str]:
    found = {k: v for k, v in os.environ.items()
             if k not in ("DATABASE_URL", "TICKQ_REGISTRY", "TICKQ_LOG_FORMAT", "COLUMNS")}
    found["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(REPO / "python_runner"), os.environ.get("PYTHONPATH")) if p)
    found["PYTHONDONTWRITEBYTECODE"] = "1"
    return found


def registry(folder: Path, kinds: int = 3) -> Path:
    """Kinds due once a day, twelve hours from now: a tick after the first runs nothing."""
    at = (datetime.now(UTC) + timedelta(hours=12)).strftime("%H:%M")
    text = "[settings]\nslots = 2\n" + "".join(
        f'\n[kinds.k{i}]\ncommand = ["true"]\nat = ["{at}"]\ntimeout = "30s"\n'
        for i in range(kinds))
    path = folder / "registry.toml"
    path.write_text(textwrap.dedent(text))
    return path


def tick(path: Path, db_url: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "tickq.cli", "tick", "--registry", str(path), "--database-url",
         db_url], env=env(), capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


def rows(conn: psycopg.Connection) -> dict[str, set[tuple[str, str, str]]]:
    """Every row of every tickq table by its place and the transactions that wrote or locked
    it: a row written, deleted or locked changes its table's set."""
    tables = [t for (t,) in conn.execute(
        "SELECT c.relname FROM pg_class AS c JOIN pg_namespace AS n ON n.oid = c.relnamespace"
        " WHERE n.nspname = 'tickq' AND c.relkind = 'r' ORDER BY 1").fetchall()]
    return {t: set(conn.execute(
        f"SELECT ctid::text, xmin::text, xmax::text FROM tickq.{t}").fetchall())  # noqa: S608
        for t in tables}


def written(before: dict[str, set], after: dict[str, set]) -> list[str]:
    return sorted(t for t in after if before.get(t) != after[t])


def sessions(conn: psycopg.Connection, server: bool = False) -> int:
    """Sessions ever started on this database (or on every database of the server), once every
    other client backend has ended (a backend's counts reach the statistics before it leaves
    the list of backends)."""
    where = "true" if server else "datname = current_database()"
    for _ in range(400):
        conn.execute("SELECT pg_stat_clear_snapshot()")
        others = conn.execute(
            f"SELECT count(*) FROM pg_stat_activity WHERE {where}"  # noqa: S608
            " AND pid <> pg_backend_pid() AND backend_type = 'client backend'").fetchone()[0]
        if others == 0:
            conn.execute("SELECT pg_stat_clear_snapshot()")
            return conn.execute(f"SELECT sum(sessions)::int FROM pg_stat_database"  # noqa: S608
                                f" WHERE {where}").fetchone()[0]
        conn.execute("SELECT pg_sleep(0.05)")
    raise AssertionError("other sessions stayed on the server")



@contextlib.contextmanager
def counting_calls(conn: psycopg.Connection) -> Iterator[None]:
    """The database's sessions count their calls of plpgsql functions (track_functions) while
    this lasts."""
    name = conn.info.dbname
    conn.execute(f"ALTER DATABASE \"{name}\" SET track_functions = 'pl'")
    try:
        yield
    finally:
        conn.execute(f"ALTER DATABASE \"{name}\" RESET track_functions")


def judged(conn: psycopg.Connection, function: str = "parse_kind") -> int:
    """Kinds the database has judged (calls of tickq.parse_kind, through the sync or
    kind_problems; or calls of `function`) in the sessions that have ended, once every other
    session has ended."""
    sessions(conn)
    return conn.execute("SELECT coalesce(sum(calls), 0)::int FROM pg_stat_user_functions"
                        " WHERE schemaname = 'tickq' AND funcname = %s", [function]).fetchone()[0]
