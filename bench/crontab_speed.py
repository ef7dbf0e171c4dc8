"""How long `check`, `simulate --hours 744` and `check --suggest` take on the registries people
write, against a bare psycopg process on the same server in the same run (issue 47's ratios):

- `examples/crontab/registry.toml` (a moved crontab: a one-minute tick, minute lists and steps
  as cron strings, nightly, weekly and monthly lines): `check` at most 10x the reference,
  `simulate --hours 744` at most 20x;
- `examples/starvation/real_fix.toml` (the story's registry): `check` at most 5x;
- `examples/starvation/original.toml`: `check --suggest` at most 20x;
- 1,000 generated cron-string kinds (`crontabs.many_crons`: every shape, a one-minute tick),
  `check` over their month (31 days and the month ends): under 10 s.

    .venv/bin/python bench/crontab_speed.py [--quick] [--reps N] [--limit S] [--only ROW ...]
                                            [--database-url URL]

Measured in turn, A B C D A B C D ... (--reps rounds, default 5; --quick 3): A the reference
(`python -c "import psycopg; psycopg.connect(URL).execute('select 1')"`), then each command as
its own `python -m tickq.cli` process; a ratio is median(command) / median(A), so load from
other work on the machine falls on both. The scratch databases live on the bench's server
(`TICKQ_SCRATCH_URL`), as on the embedded default. One untimed check first builds the scratch
template. The suggest and the 1,000 kinds are timed min(reps, 3) times (--quick: once), each
stopped after --limit seconds (default 300). `--only suggest` (or check, simulate, real_fix,
many; repeatable) measures those rows only, each against the same reference: `--only suggest
--reps 7` times the suggest 7 times, the reference in each round.
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
ROWS = ("check", "simulate", "real_fix", "suggest", "many")


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


def row(name: str, walls: list[float], ref: float, target: float | None, verdict: str) -> str:
    """A table row: the median, its ratio to A against `target` (a ratio; None: under 10 s)."""
    mid = statistics.median(walls)
    met = mid / ref <= target if target is not None else mid < 10
    aim = f"at most {target:g}x" if target is not None else "under 10 s"
    return (f"| {name} | {mid:.2f} s | {mid / ref:.1f}x | {aim}: {'met' if met else 'NOT MET'} "
            f"| {verdict} | {', '.join(f'{w:.2f}' for w in walls)} |")


def commands(many: Path) -> dict[str, tuple[str, str, Path, tuple[str, ...], float | None]]:
    """Each row: its name in the table, the command, the registry, more arguments, the target."""
    return {
        "check": ("check examples/crontab", "check", CRONTAB, (), 10),
        "simulate": ("simulate --hours 744 examples/crontab", "simulate", CRONTAB,
                     ("--hours", "744"), 20),
        "real_fix": ("check examples/starvation/real_fix", "check", REAL_FIX, (), 5),
        "suggest": ("check --suggest examples/starvation/original", "check", ORIGINAL,
                    ("--suggest",), 20),
        "many": ("check of 1,000 cron-string kinds (their month)", "check", many, (), None),
    }


def measure(keys: list[str], rows: dict, url: str, env: dict[str, str], limit: float | None,
            walls: dict[str, list[float]], said: dict[str, str]) -> None:
    """One run of each row in `keys`, into `walls` and `said` (a run stopped at `limit` counts
    as `limit` seconds)."""
    for key in keys:
        _, command, registry, more, _ = rows[key]
        try:
            wall, said[key] = timed(command, registry, url, env, *more, limit=limit)
        except subprocess.TimeoutExpired:
            wall, said[key] = float(limit or 0), f"stopped at {limit} s"
        walls.setdefault(key, []).append(wall)


def main() -> None:
    p = c.parser(__doc__.splitlines()[0])
    p.add_argument("--reps", type=int, help="rounds (default 5; --quick 3)")
    p.add_argument("--limit", type=int, default=300, help="stop a suggest or the 1,000 kinds "
                   "after this many seconds (default 300)")
    p.add_argument("--only", action="append", choices=ROWS, help="measure only these rows")
    args = p.parse_args()
    reps = args.reps or (3 if args.quick else 5)
    chosen = [key for key in ROWS if key in (args.only or ROWS)]
    # Without --only the long rows are timed after the rounds, min(reps, 3) times (--quick: once).
    long_keys = [] if args.only else [k for k in ("suggest", "many") if k in chosen]
    short_keys = [k for k in chosen if k not in long_keys]
    with (tempfile.TemporaryDirectory(prefix="tickq-bench-crontab-") as tmp,
          c.server(args.database_url) as server, c.fresh_database(server, "crontab") as url):
        folder = Path(tmp)
        env = check_speed.environment(folder, server)
        rows = commands(crontabs.many_crons(folder, 1000))
        with db.connect(url) as conn:
            print(c.server_info(conn))
        check_speed.reference(url, env)
        first, _ = timed("check", CRONTAB, url, env)
        print(f"first check of the crontab example (builds the scratch template if missing): "
              f"{first:.2f} s\n")
        walls: dict[str, list[float]] = {"A": []}
        said: dict[str, str] = {}
        for _ in range(reps):
            walls["A"].append(check_speed.reference(url, env))
            measure(short_keys, rows, url, env, args.limit, walls, said)
        for _ in range(1 if args.quick else min(reps, 3)):
            measure(long_keys, rows, url, env, args.limit, walls, said)
        ref = statistics.median(walls["A"])
        print(f"A reference, bare psycopg connect + select 1: {ref * 1000:.0f} ms "
              f"(runs: {', '.join(f'{r * 1000:.0f}' for r in walls['A'])})\n")
        print("| command | median | / A | target | verdict | runs (s) |")
        print("|---|---:|---:|---|---|---|")
        for key in chosen:
            name, _, _, _, target = rows[key]
            print(row(name, walls[key], ref, target, said[key]), flush=True)
        print(f"load average after {', '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
