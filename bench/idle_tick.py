"""What a wake-up with nothing to do costs: `tickq tick` of the story's 45 kinds
(examples/starvation/real_fix.toml) on the embedded default (no DATABASE_URL), nothing due,
next to a bare `python -c` that imports psycopg, connects to the same server and runs
`select 1`, measured A B A B in one run: wall time, peak RSS, and the WAL an idle tick writes.

    PYTHONDONTWRITEBYTECODE=1 .venv/bin/python -B bench/idle_tick.py [--reps N] [--against DIR]

With --against DIR (another checkout, e.g. a `git worktree` of an older commit), that
checkout's idle tick of the same registry is measured in the same interleaved run, on a database
of its own on the same server (given by URL: an older checkout may make more connections on
the embedded default than this one). The embedded server runs in a temporary folder, removed
at the end; no bytecode is written (children get PYTHONDONTWRITEBYTECODE=1).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "python_runner"))
sys.dont_write_bytecode = True

import psycopg  # noqa: E402

from tickq.db import connect as tickq_connect  # noqa: E402
from tickq.db import embedded  # noqa: E402

REGISTRY = REPO / "examples" / "starvation" / "real_fix.toml"
NOTHING_DUE = "UPDATE tickq.job_kind SET due_at = now() + interval '1 day'"


def measured(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall seconds and peak RSS (MiB, the kernel's VmHWM) of one process."""
    started = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    peak = 0
    status = Path(f"/proc/{proc.pid}/status")
    while proc.poll() is None:
        try:
            for line in status.read_text().splitlines():
                if line.startswith("VmHWM:"):
                    peak = max(peak, int(line.split()[1]))
        except (FileNotFoundError, ProcessLookupError):
            break
        time.sleep(0.002)
    _out, err = proc.communicate()
    wall = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(f"{argv} exited {proc.returncode}: {err.decode()[-2000:]}")
    return wall, peak / 1024


def wal(conn: psycopg.Connection) -> int:
    return conn.execute("SELECT pg_current_wal_insert_lsn() - '0/0'").fetchone()[0]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--reps", type=int, default=15, help="repetitions of each (default 15)")
    p.add_argument("--against", type=Path, metavar="DIR",
                   help="another checkout whose idle tick is measured in the same run")
    args = p.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="tickq-bench-idle-"))
    folder.chmod(0o711)
    pgdata = folder / "pg"
    try:
        run(args, folder, pgdata)
    finally:
        embedded.stop_server(pgdata)
        shutil.rmtree(folder, ignore_errors=True)


def run(args: argparse.Namespace, folder: Path, pgdata: Path) -> None:
    registry = folder / "registry.toml"
    shutil.copy(REGISTRY, registry)
    shutil.copytree(REGISTRY.parent / "bin", folder / "bin")
    base = {"PATH": "/usr/bin:/bin", "PYTHONDONTWRITEBYTECODE": "1",
            "HOME": str(folder), "TICKQ_CACHE_DIR": str(folder / "cache"),
            "TICKQ_RUN_DIR": str(folder / "run")}
    env = {**base, "PYTHONPATH": str(REPO / "python_runner"), "TICKQ_DATA_DIR": str(folder)}
    os.environ["TICKQ_DATA_DIR"] = str(folder)
    server = embedded.ensure_server(pgdata)
    url = tickq_connect.resolve_url(None)
    tick = [sys.executable, "-m", "tickq.cli", "tick", "--registry", str(registry)]
    subprocess.run([*tick[:3], "sync", *tick[4:]], env=env, check=True, capture_output=True)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(NOTHING_DUE)
    bare = [sys.executable, "-c",
            f"import psycopg; psycopg.connect({url!r}).execute('select 1')"]
    others: list[tuple[float, float]] = []
    other = None
    if args.against:
        other_url = tickq_connect.create_database(server, "tickq_against")
        other_env = {**base, "PYTHONPATH": str(args.against.resolve() / "python_runner")}
        other = ([*tick, "--database-url", other_url], other_env)
        subprocess.run([*tick[:3], "sync", *tick[4:], "--database-url", other_url],
                       env=other_env, check=True, capture_output=True)
        with psycopg.connect(other_url, autocommit=True) as conn:
            conn.execute(NOTHING_DUE)
    measured(tick, env)  # warm: the caches of the registry's shape and the schema's checksum
    if other:
        measured(*other)
    ticks, bares, wal_ours, wal_other = [], [], [], []
    with psycopg.connect(server, autocommit=True) as watch:
        for _ in range(args.reps):  # A B A B: drift on the machine hits all alike
            before = wal(watch)
            ticks.append(measured(tick, env))
            wal_ours.append(wal(watch) - before)
            bares.append(measured(bare, env))
            if other:
                before = wal(watch)
                others.append(measured(*other))
                wal_other.append(wal(watch) - before)
    report(args, ticks, bares, others, wal_ours, wal_other)


def report(args: argparse.Namespace, ticks: list, bares: list, others: list,
           wal_ours: list[int], wal_other: list[int]) -> None:
    def med(xs: list, i: int) -> float:
        return statistics.median(x[i] for x in xs)

    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"=== idle tick of {REGISTRY.relative_to(REPO)} (45 kinds, nothing due) on the embedded "
          f"default vs a bare psycopg connect + select 1, A B A B, median of {args.reps}; "
          f"{os.cpu_count()} CPUs, load average after the run {load}")
    rows = [("tickq tick", med(ticks, 0), med(ticks, 1), statistics.median(wal_ours)),
            ("python -c 'import psycopg; connect; select 1'", med(bares, 0), med(bares, 1), 0)]
    if others:
        rows.append((f"tickq tick of {args.against}", med(others, 0), med(others, 1),
                     statistics.median(wal_other)))
    print(f"{'process':48} {'wall ms':>8} {'peak RSS MiB':>13} {'WAL bytes':>10}")
    for name, wall, rss, wal_bytes in rows:
        print(f"{name:48} {wall * 1000:8.0f} {rss:13.1f} {wal_bytes:10.0f}")
    ratio, rss_ratio = med(ticks, 0) / med(bares, 0), med(ticks, 1) / med(bares, 1)
    print(f"ratio tick / bare: wall {ratio:.2f} (target 1.2: "
          f"{'met' if ratio <= 1.2 else 'NOT met'}), peak RSS {rss_ratio:.2f} (target 1.1: "
          f"{'met' if rss_ratio <= 1.1 else 'NOT met'})")
    if others:
        print(f"this checkout / {args.against}: wall {med(ticks, 0) / med(others, 0):.2f}, "
              f"peak RSS {med(ticks, 1) / med(others, 1):.2f}")


if __name__ == "__main__":
    main()
