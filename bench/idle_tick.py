"""What a wake-up with nothing to do costs: `tickq tick` of the story's 45 kinds
(examples/starvation/real_fix.toml) on the embedded default (no DATABASE_URL), nothing due,
next to a bare `python -c` that imports psycopg, connects to the same server and runs
`select 1`, measured A B A B in one run: wall time, peak RSS, and the WAL an idle tick writes.

    PYTHONDONTWRITEBYTECODE=1 .venv/bin/python -B bench/idle_tick.py [--reps N] [--against DIR]
        [--kinds N]

With --kinds N the registry is N generated kinds (each once a day) instead of the story's.

With --against DIR (another checkout, e.g. a `git worktree` of an older commit), that
checkout's idle tick of the same registry is measured in the same interleaved run, on a database
of its own on the same server (given by URL: an older checkout may make more connections on
the embedded default than this one). The embedded server runs in a temporary folder, removed
at the end, with the bytecode the runs compiled (PYTHONPYCACHEPREFIX points there, so none is
written into the checkout).
"""

from __future__ import annotations

import argparse
import os
import resource
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

from tickq import db  # noqa: E402
from tickq.db import embedded  # noqa: E402

REGISTRY = REPO / "examples" / "starvation" / "real_fix.toml"
NOTHING_DUE = "UPDATE tickq.job_kind SET due_at = now() + interval '1 day'"


def measured(argv: list[str], env: dict[str, str]) -> tuple[float, float, float]:
    """Wall seconds, peak RSS (MiB, the kernel's VmHWM) and CPU seconds (user + system: what
    load on a shared machine changes least) of one process."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
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
    now = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"{argv} exited {proc.returncode}: {err.decode()[-2000:]}")
    cpu = now.ru_utime - used.ru_utime + now.ru_stime - used.ru_stime
    return wall, peak / 1024, cpu


def wal(conn: psycopg.Connection) -> int:
    return conn.execute("SELECT pg_current_wal_insert_lsn() - '0/0'").fetchone()[0]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--reps", type=int, default=15, help="repetitions of each (default 15)")
    p.add_argument("--against", type=Path, metavar="DIR",
                   help="another checkout whose idle tick is measured in the same run")
    p.add_argument("--kinds", type=int, metavar="N",
                   help="N generated kinds, each once a day, instead of the story's registry")
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
    if args.kinds:
        registry.write_text("".join(
            f'[kinds.k{i:05d}]\ncommand = ["true"]\nevery = "1d"\ntimeout = "1m"\n\n'
            for i in range(args.kinds)))
    else:
        shutil.copy(REGISTRY, registry)
        shutil.copytree(REGISTRY.parent / "bin", folder / "bin")
    # Bytecode goes to the temporary folder, as an installed package has its own: compiling
    # tickq's modules on every run would be measured otherwise, and none lands in the checkout.
    base = {"PATH": "/usr/bin:/bin", "PYTHONPYCACHEPREFIX": str(folder / "pycache"),
            "HOME": str(folder), "TICKQ_CACHE_DIR": str(folder / "cache"),
            "TICKQ_RUN_DIR": str(folder / "run")}
    env = {**base, "PYTHONPATH": str(REPO / "python_runner"), "TICKQ_DATA_DIR": str(folder)}
    os.environ["TICKQ_DATA_DIR"] = str(folder)
    os.environ.pop("DATABASE_URL", None)
    server = embedded.ensure_server(pgdata)
    url = db.resolve_url(None, registry)  # the queue of the registry's folder, as the tick's
    tick = [sys.executable, "-m", "tickq.cli", "tick", "--registry", str(registry)]
    subprocess.run([*tick[:3], "sync", *tick[4:]], env=env, check=True, capture_output=True)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(NOTHING_DUE)
    bare = [sys.executable, "-c",
            f"import psycopg; psycopg.connect({url!r}).execute('select 1')"]
    others: list[tuple[float, float]] = []
    other = None
    if args.against:
        other_url = db.create_database(server, "tickq_against")
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
    what = (f"{args.kinds} generated kinds" if args.kinds
            else f"{REGISTRY.relative_to(REPO)} (45 kinds)")
    print(f"=== idle tick of {what}, nothing due, on the embedded "
          f"default vs a bare psycopg connect + select 1, A B A B, median of {args.reps}; "
          f"{os.cpu_count()} CPUs, load average after the run {load}")
    rows = [("tickq tick", ticks, statistics.median(wal_ours)),
            ("python -c 'import psycopg; connect; select 1'", bares, 0)]
    if others:
        rows.append((f"tickq tick of {args.against}", others, statistics.median(wal_other)))
    print(f"{'process':48} {'wall ms':>8} {'CPU ms':>7} {'peak RSS MiB':>13} {'WAL bytes':>10}")
    for name, xs, wal_bytes in rows:
        print(f"{name:48} {med(xs, 0) * 1000:8.0f} {med(xs, 2) * 1000:7.0f} {med(xs, 1):13.1f}"
              f" {wal_bytes:10.0f}")

    def ratio(a: list, b: list, i: int) -> float:
        return med(a, i) / med(b, i)

    print(f"tick / bare: wall {ratio(ticks, bares, 0):.2f}, CPU {ratio(ticks, bares, 2):.2f} "
          f"(target 1.2: {'met' if ratio(ticks, bares, 2) <= 1.2 else 'NOT met'}), peak RSS "
          f"{ratio(ticks, bares, 1):.2f} (target 1.1: "
          f"{'met' if ratio(ticks, bares, 1) <= 1.1 else 'NOT met'})")
    if others:
        print(f"this checkout / {args.against}: wall {ratio(ticks, others, 0):.2f}, CPU "
              f"{ratio(ticks, others, 2):.2f}, peak RSS {ratio(ticks, others, 1):.2f}")


if __name__ == "__main__":
    main()
