"""How long `check`, `simulate --hours 744` and `check --suggest` take on the registries people
write, against a bare psycopg process on the same server in the same run (issue 47's ratios):

- `examples/crontab/registry.toml` (a moved crontab: a one-minute tick, minute lists and steps
  as cron strings, nightly, weekly and monthly lines): `check` at most 10x the reference,
  `simulate --hours 744` at most 20x;
- `examples/starvation/real_fix.toml` (the story's registry): `check` at most 5x;
- `examples/starvation/original.toml`: `check --suggest` at most 20x;
- 1,000 generated cron-string kinds (`crontabs.many_crons`: every shape, a one-minute tick),
  `check` over their month (31 days and the month ends): under 10 s.

    .venv/bin/python bench/crontab_speed.py [--quick] [--reps N] [--limit S] [--only NAME ...]
                                            [--database-url URL]

Each command is paired with the reference A (`python -c "import psycopg;
psycopg.connect(URL).execute('select 1')"`) run just before it: A check A real_fix A simulate,
A check A real_fix A simulate, ... (--reps rounds, default 9; --quick 3), each command its own
`python -m tickq.cli` process. A command's ratio is the median of its pairs' ratios (its run
/ the A just before it), so load from other work on the machine, which swings A between 0.2
and 1.4 s here, falls on both sides of each pair; the medians of each side and the spread of
the ratios (min-max) are printed beside it. The scratch databases live on the bench's server
(`TICKQ_SCRATCH_URL`), as on the embedded default. One untimed check first builds the scratch
template. The suggest and the 1,000 kinds are timed min(reps, 3) times (--quick: once), each
stopped after --limit seconds (default 300). --only (check, real_fix, simulate, suggest,
many; repeatable) measures those alone.
"""

from __future__ import annotations

import sys

sys.dont_write_bytecode = True  # before anything of the checkout is imported

import os  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import _common as c  # noqa: E402
import check_speed  # noqa: E402
import crontabs  # noqa: E402

from tickq import db  # noqa: E402

CRONTAB = crontabs.EXAMPLE
REAL_FIX = check_speed.REAL_FIX
ORIGINAL = check_speed.ORIGINAL


def timed(command: str, registry: Path, url: str, env: dict[str, str], *more: str,
          limit: float | None = None) -> tuple[float, str]:
    """Seconds of one `tickq COMMAND` process and the first line of its verdict (stopped after
    `limit` seconds: subprocess.TimeoutExpired)."""
    started = time.perf_counter()
    done = subprocess.run([*check_speed.TICKQ, command, *more, "--registry", str(registry),
                           "--database-url", url], env=env, capture_output=True, text=True,
                          check=False, timeout=limit)
    wall = time.perf_counter() - started
    if done.returncode not in (0, 1):
        raise SystemExit(f"tickq {command} exited {done.returncode}: {done.stderr[-2000:]}")
    said = [line for line in done.stdout.splitlines()
            if line.startswith(("worst case fits", "worst case STARVES", "simulated"))]
    return wall, f"exit {done.returncode}" + (f", {said[0][:70]}" if said else "")


def row(name: str, walls: list[float], refs: list[float], target: float | None,
        verdict: str) -> str:
    """A table row: the median, the median of the pair ratios (each run against the A just
    before it) against `target` (a ratio; None: under 10 s), and the runs."""
    mid = statistics.median(walls)
    ratios = sorted(w / r for w, r in zip(walls, refs))
    ratio = statistics.median(ratios)
    met = ratio <= target if target is not None else mid < 10
    aim = f"at most {target:g}x" if target is not None else "under 10 s"
    return (f"| {name} | {mid:.2f} s | {statistics.median(refs) * 1000:.0f} ms | {ratio:.2f}x "
            f"({ratios[0]:.1f}-{ratios[-1]:.1f}) | {aim}: {'met' if met else 'NOT MET'} "
            f"| {verdict} | {', '.join(f'{w:.2f}' for w in walls)} |")


SHORT = {"check": ("check examples/crontab", "check", CRONTAB, (), 10),
         "real_fix": ("check examples/starvation/real_fix", "check", REAL_FIX, (), 5),
         "simulate": ("simulate --hours 744 examples/crontab", "simulate", CRONTAB,
                      ("--hours", "744"), 20)}


def short_ones(keys: list[str], reps: int, url: str, env: dict[str, str]) -> None:
    """The commands of a few seconds, in rounds, each paired with an A just before it."""
    walls: dict[str, list[float]] = {k: [] for k in keys}
    refs: dict[str, list[float]] = {k: [] for k in keys}
    said: dict[str, str] = {}
    for _ in range(reps):
        for key in keys:
            _, command, registry, more, _ = SHORT[key]
            refs[key].append(check_speed.reference(url, env))
            wall, said[key] = timed(command, registry, url, env, *more)
            walls[key].append(wall)
    every = [r * 1000 for key in keys for r in refs[key]]
    if not every:
        return
    print(f"A reference, bare psycopg connect + select 1: median {statistics.median(every):.0f}"
          f" ms (runs {min(every):.0f}-{max(every):.0f})\n")
    print("| command | median | A before it | / A, pair by pair (min-max) | target | verdict "
          "| runs (s) |")
    print("|---|---:|---:|---:|---|---|---|")
    for key in keys:
        name, _, _, _, target = SHORT[key]
        print(row(name, walls[key], refs[key], target, said[key]), flush=True)


def long_ones(keys: list[str], runs: int, limit: int, many: Path, url: str,
              env: dict[str, str]) -> None:
    """The suggest and the 1,000 kinds: `runs` times each, each after its own A."""
    for key, name, registry, more, target in (
            ("suggest", "check --suggest examples/starvation/original", ORIGINAL,
             ("--suggest",), 20),
            ("many", "check of 1,000 cron-string kinds (their month)", many, (), None)):
        if key not in keys:
            continue
        walls, refs = [], []
        for _ in range(runs):
            refs.append(check_speed.reference(url, env))
            try:
                wall, verdict = timed("check", registry, url, env, *more, limit=limit)
            except subprocess.TimeoutExpired:
                wall, verdict = float(limit), f"stopped at {limit} s"
            walls.append(wall)
        print(row(name, walls, refs, target, verdict), flush=True)


def main() -> None:
    p = c.parser(__doc__.splitlines()[0])
    p.add_argument("--reps", type=int, help="rounds (default 9; --quick 3)")
    p.add_argument("--limit", type=int, default=300, help="stop a suggest or the 1,000 kinds "
                   "after this many seconds (default 300)")
    p.add_argument("--only", action="append", choices=[*SHORT, "suggest", "many"])
    args = p.parse_args()
    reps = args.reps or (3 if args.quick else 9)
    keys = args.only or [*SHORT, "suggest", "many"]
    with (tempfile.TemporaryDirectory(prefix="tickq-bench-crontab-") as tmp,
          c.server(args.database_url) as server, c.fresh_database(server, "crontab") as url):
        folder = Path(tmp)
        env = check_speed.environment(folder, server)
        with db.connect(url) as conn:
            print(c.server_info(conn))
        check_speed.reference(url, env)
        first, _ = timed("check", CRONTAB, url, env)
        print(f"first check of the crontab example (builds the scratch template if missing): "
              f"{first:.2f} s\n")
        short_ones([k for k in SHORT if k in keys], reps, url, env)
        long_ones(keys, 1 if args.quick else min(reps, 3), args.limit,
                  crontabs.many_crons(folder, 1000), url, env)
        print(f"load average after {', '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
