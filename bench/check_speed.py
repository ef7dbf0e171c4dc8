"""How long `tickq check` takes with its worst-case simulation: a week of the story's 45 kinds
(examples/starvation/real_fix.toml, weekly kinds in London: a week holding a clock change) and a
day of 1,000 kinds, as ratios against a reference run in the same invocation (a bare connect and
1,000 empty `claim_jobs(3)` polls on a migrated database).

    .venv/bin/python bench/check_speed.py [--quick] [--reps N] [--database-url URL]

Each figure is the median of --reps runs (default 3; --quick: 1 run, 300 kinds). Reported: the
whole `tickq check` command (a process: start-up, capacity table, scratch database, simulation),
and the simulation alone (simulate.worst_case in this process), with the events it handled.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import _common as c

from tickq import db
from tickq.check import simulate
from tickq.registry import load_registry

TICKQ = [sys.executable, "-m", "tickq.cli"]
PYTHONPATH = str(c.REPO / "python_runner")
REAL_FIX = c.REPO / "examples" / "starvation" / "real_fix.toml"


def many_kinds(folder: Path, count: int) -> Path:
    """`count` kinds that fit 40 slots, spread with offsets: a tenth every 15 minutes, three
    tenths hourly, three tenths every 6 hours and three tenths daily at a time of day (UTC)."""
    lines = ['[settings]\nslots = 40\ntick = "5m"\nstale_after = "15m"\n']
    for i in range(count):
        share = i % 10
        if share == 0:
            schedule, timeout = f'every = "15m"\noffset = "{(i // 10) % 3 * 5}m"', "1m"
        elif share <= 3:
            schedule, timeout = f'every = "1h"\noffset = "{(i * 7) % 12 * 5}m"', "2m"
        elif share <= 6:
            schedule, timeout = f'every = "6h"\noffset = "{(i * 11) % 72 * 5}m"', "5m"
        else:
            minute = (i * 13) % (24 * 12) * 5
            schedule, timeout = f'at = "{minute // 60:02d}:{minute % 60:02d}"', "5m"
        priority = ("urgent", "high", "normal", "low")[i % 4]
        lines.append(f'[kinds.k{i:04d}]\ncommand = ["true"]\n{schedule}\ntimeout = "{timeout}"\n'
                     f'priority = "{priority}"\n')
    path = folder / f"kinds_{count}.toml"
    path.write_text("\n".join(lines))
    return path


def reference(url: str) -> float:
    """Seconds for a connect and 1,000 empty claim polls: the unit of the ratios."""
    started = time.perf_counter()
    with db.connect(url) as conn:
        for _ in range(1000):
            conn.execute("SELECT * FROM tickq.claim_jobs(3, 'bench')").fetchall()
    return time.perf_counter() - started


def whole_check(registry: Path, url: str) -> tuple[float, str]:
    env = {"PYTHONPATH": PYTHONPATH, "PATH": "/usr/bin:/bin"}
    started = time.perf_counter()
    done = subprocess.run([*TICKQ, "check", "--registry", str(registry), "--database-url", url],
                          env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    if done.returncode not in (0, 1):
        raise SystemExit(f"tickq check exited {done.returncode}: {done.stderr[-2000:]}")
    verdict = next((line for line in done.stdout.splitlines()
                    if line.startswith(("worst case fits", "worst case STARVES"))), "?")
    return wall, verdict.split(":")[0]


def simulation_only(registry: Path, server: str) -> tuple[float, int, str]:
    loaded = load_registry(registry)
    started = time.perf_counter()
    result = simulate.worst_case(server, loaded, None)
    wall = time.perf_counter() - started
    runs = sum(k.runs for k in result.kinds)
    return wall, runs, ", ".join(f"{float(w.hours):g} h" for w in result.windows)


def main() -> None:
    p = c.parser(__doc__.splitlines()[0])
    p.add_argument("--reps", type=int, help="runs of each figure (default 3)")
    args = p.parse_args()
    reps = args.reps or (1 if args.quick else 3)
    count = 300 if args.quick else 1000
    folder = Path(tempfile.mkdtemp(prefix="tickq-bench-check-"))
    cases = [("real_fix.toml, 45 kinds, a week", REAL_FIX, 5.0),
             (f"{count} kinds, a day", many_kinds(folder, count), 30.0)]
    with c.server(args.database_url) as server, c.fresh_database(server, "check") as url:
        with db.connect(url) as conn:
            print(c.server_info(conn))
        ref = statistics.median(reference(url) for _ in range(reps))
        print(f"reference: connect + 1,000 empty claim_jobs(3) polls: {ref:.2f} s\n")
        print(f"{'case':34} {'whole check':>12} {'ratio':>7} {'simulation':>11} {'ratio':>7}"
              f" {'runs':>7}  window, verdict, target")
        for name, registry, target in cases:
            checks = [whole_check(registry, url) for _ in range(reps)]
            sims = [simulation_only(registry, server) for _ in range(reps)]
            check = statistics.median(w for w, _v in checks)
            sim = statistics.median(w for w, _r, _h in sims)
            print(f"{name:34} {check:>10.2f} s {check / ref:>7.2f} {sim:>9.2f} s {sim / ref:>7.2f}"
                  f" {sims[0][1]:>7}  {sims[0][2]}, {checks[0][1]}, < {target:g} s: "
                  + ("met" if check < target else "NOT MET"))


if __name__ == "__main__":
    main()
