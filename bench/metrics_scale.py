"""How `tickq metrics` answers a scrape as the queue grows: kinds and runs of history, against a
bare psycopg process on the same server in the same run (the ratios' unit, measured A B A B).

    .venv/bin/python bench/metrics_scale.py [--quick] [--reps N] [--kinds N ...] [--runs N]
                                            [--before]

Default sizes: 1,000, 5,000 and 20,000 kinds (`every = "5m"`), each with 1,000,000 finished
runs (every tenth failed, durations 0-59 s), loaded with `_queues.load_kinds` and
`load_history` (tickq.run_count counted from them in one statement, as migration 0072 does on an
upgrade, rather than by its trigger a row at a time). Per size:
the whole `tickq metrics` process (B) against `python -c "import psycopg; connect; select 1"`
(A), the server time of `SELECT tickq.metrics_text()` and the text's size. With --before, the
metrics_text of 5ef5668 (tests_py/data/metrics_text_5ef5668.sql) is timed too, stopped at 60 s,
the statement timeout a dispatcher's connection has by default.
"""

from __future__ import annotations

import sys

sys.dont_write_bytecode = True

import os  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import _common as c  # noqa: E402
import _queues as q  # noqa: E402
import psycopg  # noqa: E402

from tickq import db  # noqa: E402

TICKQ = [sys.executable, "-m", "tickq.cli"]
REFERENCE = "import psycopg, sys; psycopg.connect(sys.argv[1]).execute('select 1')"
BEFORE = c.REPO / "tests_py" / "data" / "metrics_text_5ef5668.sql"
LOADING = db.Timeouts(statement=3600)  # a million runs go in one statement


def environment(folder: Path) -> dict[str, str]:
    return {"PYTHONPATH": str(c.REPO / "python_runner"), "PATH": os.environ.get("PATH", ""),
            "PYTHONPYCACHEPREFIX": str(folder / "pycache"), "HOME": str(folder),
            "TICKQ_CACHE_DIR": str(folder / "cache"), "TICKQ_RUN_DIR": str(folder / "run")}


def timed(argv: list[str], env: dict[str, str]) -> tuple[float, int]:
    started = time.perf_counter()
    done = subprocess.run(argv, env=env, capture_output=True, check=False)
    wall = time.perf_counter() - started
    if done.returncode:
        raise SystemExit(f"{argv[2:4]} exited {done.returncode}: {done.stderr[-1000:]!r}")
    return wall, len(done.stdout)


def server_ms(url: str, query: str, timeout_s: int = 600) -> float:
    with db.connect(url, timeouts=LOADING) as conn:
        conn.execute(f"SET statement_timeout = {timeout_s * 1000}")
        started = time.perf_counter()
        try:
            conn.execute(query).fetchone()
        except psycopg.errors.QueryCanceled:
            return float("inf")
        return (time.perf_counter() - started) * 1000


def before_ms(url: str) -> float:
    """5ef5668's metrics_text, stopped at 60 s (inf: it was)."""
    with db.connect(url, timeouts=LOADING) as conn:
        conn.execute(BEFORE.read_text())
        conn.execute("SET statement_timeout = 60000")
        started = time.perf_counter()
        try:
            conn.execute("SELECT pg_temp.metrics_text_before()").fetchone()
        except psycopg.errors.QueryCanceled:
            return float("inf")
        return (time.perf_counter() - started) * 1000


def measure(server: str, kinds: int, runs: int, reps: int, before: bool, folder: Path) -> str:
    with c.fresh_database(server, "metrics") as url:
        with db.connect(url, timeouts=LOADING) as conn:
            started = time.perf_counter()
            q.load_kinds(conn, kinds, q.DUE_SHAPES["pct1"])
            q.load_history(conn, kinds, runs)
            loaded = time.perf_counter() - started
        env = environment(folder)
        timed([sys.executable, "-c", REFERENCE, url], env)  # bytecode first
        refs, walls, size = [], [], 0
        for _ in range(reps):
            refs.append(timed([sys.executable, "-c", REFERENCE, url], env)[0])
            wall, size = timed([*TICKQ, "metrics", "--database-url", url], env)
            walls.append(wall)
        ref, wall = statistics.median(refs), statistics.median(walls)
        sql_ms = server_ms(url, "SELECT tickq.metrics_text()")
        line = (f"| {kinds:>7,} | {runs:>9,} | {ref * 1000:5.0f} | {wall * 1000:6.0f} |"
                f" {wall / ref:5.1f}x | {sql_ms:6.0f} | {size / 1e6:5.1f} |")
        if before:
            line += f" {before_ms(url):8.0f} |"
        return line + f" {loaded:5.0f} s |"


def main() -> None:
    p = c.parser(__doc__.splitlines()[0])
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--kinds", type=int, nargs="+")
    p.add_argument("--runs", type=int)
    p.add_argument("--before", action="store_true", help="time 5ef5668's metrics_text too")
    args = p.parse_args()
    sizes = args.kinds or ([1000, 5000] if args.quick else [1000, 5000, 20000])
    runs = args.runs or (200_000 if args.quick else 1_000_000)
    print(f"load average {', '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    with tempfile.TemporaryDirectory(prefix="tickq-bench-metrics-") as tmp, \
            c.server(args.database_url) as server:
        print("| kinds | runs | A ms | B ms | B / A | SQL ms | MB |"
              + (" before ms |" if args.before else "") + " load |", flush=True)
        print("|---:|---:|---:|---:|---:|---:|---:|" + ("---:|" if args.before else "") + "---:|")
        for kinds in sizes:
            print(measure(server, kinds, runs, args.reps, args.before, Path(tmp)), flush=True)
    print(f"load average after {', '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
