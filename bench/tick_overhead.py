"""What a tick costs the machine: wall time and peak RSS of `tickq tick` with nothing due,
next to a bare `python -c "import psycopg; psycopg.connect(URL).execute('select 1')"` in the
same run (the floor for any Python dispatcher), and the dispatcher's own peak RSS during a tick
running three commands, with and without one of them printing 100 MB.

    .venv/bin/python bench/tick_overhead.py [--quick] [--reps N] [--database-url URL]
                                             [--against DIR]

With --against DIR (another checkout of tickq, e.g. a `git worktree` of an older commit), that
checkout's idle tick is measured in the same interleaved run, each on a database of its own.
"""

from __future__ import annotations

import contextlib
import statistics
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path

import _common as c

TICKQ = [sys.executable, "-m", "tickq.cli"]
PYTHONPATH = str(c.REPO / "python_runner")


def measured(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall seconds and peak RSS (MiB) of one process, sampled from /proc every 5 ms."""
    started = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    peak = 0
    status = Path(f"/proc/{proc.pid}/status")
    while proc.poll() is None:
        try:
            for line in status.read_text().splitlines():
                if line.startswith("VmHWM:"):  # the kernel's own high-water mark of RSS
                    peak = max(peak, int(line.split()[1]))
        except (FileNotFoundError, ProcessLookupError):
            break
        time.sleep(0.005)
    _out, err = proc.communicate()
    wall = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(f"{argv} exited {proc.returncode}: {err.decode()[-2000:]}")
    return wall, peak / 1024


def registry(folder: Path, body: str) -> Path:
    path = folder / "registry.toml"
    path.write_text(textwrap.dedent(body))
    return path


def main() -> None:
    p = c.parser(__doc__.splitlines()[0])
    p.add_argument("--reps", type=int, help="repetitions of each idle measurement (default 15)")
    p.add_argument("--against", type=Path, metavar="DIR",
                   help="another checkout whose idle tick is measured in the same run")
    args = p.parse_args()
    reps = args.reps or (5 if args.quick else 15)
    env = {"PYTHONPATH": PYTHONPATH, "PATH": "/usr/bin:/bin"}
    with c.server(args.database_url) as server, c.fresh_database(server, "tick") as url:
        folder = Path(tempfile.mkdtemp(prefix="tickq-bench-tick-"))
        idle = registry(folder, """
            [kinds.daily]
            command = ["true"]
            every = "1d"
            timeout = "1m"
        """)
        tick = [*TICKQ, "tick", "--registry", str(idle), "--database-url", url]
        measured(tick, env)  # runs the kind and housekeeping once: later ticks find nothing due
        bare = [sys.executable, "-c",
                f"import psycopg; psycopg.connect({url!r}).execute('select 1')"]
        with contextlib.ExitStack() as stack:
            other = None
            if args.against:
                other_url = stack.enter_context(
                    c.fresh_database(server, "tickother", migrated=False))
                other_env = {**env, "PYTHONPATH": str(args.against.resolve() / "python_runner")}
                other = ([*TICKQ, "tick", "--registry", str(idle), "--database-url", other_url],
                         other_env)
                measured(*other)
            ticks, bares, others = [], [], []
            for _ in range(reps):  # interleaved, so drift on the machine hits all alike
                ticks.append(measured(tick, env))
                bares.append(measured(bare, env))
                if other:
                    others.append(measured(*other))

        busy_body = """
            [settings]
            slots = 3

            [kinds.a]
            command = ["sh", "-c", "sleep 1"]
            every = "1d"
            timeout = "1m"

            [kinds.b]
            command = ["sh", "-c", "sleep 1"]
            every = "1d"
            timeout = "1m"

            [kinds.c]
            command = {c_command}
            every = "1d"
            timeout = "1m"
        """
        quiet = registry(Path(tempfile.mkdtemp(dir=folder)), busy_body.format(
            c_command='["sh", "-c", "sleep 1"]'))
        loud = registry(Path(tempfile.mkdtemp(dir=folder)), busy_body.format(
            c_command='["sh", "-c", "head -c 104857600 /dev/zero | tr \'\\\\0\' x; sleep 1"]'))
        results = {}
        for name, path in (("3 commands", quiet), ("3 commands, one prints 100 MB", loud)):
            with c.fresh_database(server, "tickbusy") as busy_url:
                results[name] = measured(
                    [*TICKQ, "tick", "--registry", str(path), "--database-url", busy_url], env
                )

    tick_wall = statistics.median(w for w, _ in ticks)
    bare_wall = statistics.median(w for w, _ in bares)
    tick_rss = statistics.median(r for _, r in ticks)
    bare_rss = statistics.median(r for _, r in bares)
    print(f"=== tickq tick with nothing due vs a bare psycopg connect, median of {reps}")
    print(c.table(
        ["process", "wall ms", "peak RSS MiB"],
        [
            ["tickq tick (nothing due)", f"{tick_wall * 1000:.0f}", f"{tick_rss:.1f}"],
            ["python -c 'import psycopg; connect; select 1'", f"{bare_wall * 1000:.0f}",
             f"{bare_rss:.1f}"],
            ["ratio", f"{tick_wall / bare_wall:.2f}", f"{tick_rss / bare_rss:.2f}"],
        ],
    ))
    if others:
        other_wall = statistics.median(w for w, _ in others)
        other_rss = statistics.median(r for _, r in others)
        print(f"\n=== against {args.against}: its idle tick in the same run, median of {reps}")
        print(c.table(
            ["process", "wall ms", "peak RSS MiB"],
            [
                [f"tickq tick of {args.against.name}", f"{other_wall * 1000:.0f}",
                 f"{other_rss:.1f}"],
                ["this checkout / that one", f"{tick_wall / other_wall:.3f}",
                 f"{tick_rss / other_rss:.3f}"],
            ],
        ))
    print("\n=== the dispatcher's own peak RSS during a tick (commands are separate processes)")
    print(c.table(
        ["tick", "wall s", "dispatcher peak RSS MiB"],
        [[name, f"{w:.2f}", f"{r:.1f}"] for name, (w, r) in results.items()],
    ))
    flat = results["3 commands, one prints 100 MB"][1] - results["3 commands"][1]
    def verdict(ratio: float) -> str:
        return "met" if ratio <= 1.5 else "NOT met"

    print(f"\nratio target 1.5 or less: wall {verdict(tick_wall / bare_wall)}, "
          f"RSS {verdict(tick_rss / bare_rss)}; "
          f"100 MB of output moved the dispatcher's peak RSS by {flat:+.1f} MiB")


if __name__ == "__main__":
    threading.current_thread().name = "bench"
    main()
