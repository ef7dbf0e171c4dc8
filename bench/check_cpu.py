"""The CPU time of `tickq check` of 1,000 cron-string kinds (`crontabs.many_crons`), this
checkout against another, on a machine other work keeps busy: the check's own process and the
server's backends it used (the postmaster's reaped children: its cutime and cstime), where wall
times swing with the load.

    .venv/bin/python bench/check_cpu.py --against DIR [--rounds N] [--kinds N]

DIR is another checkout (e.g. `git archive` of an older commit); each check runs its own
checkout's tickq (`python -m tickq.cli` with its `python_runner` on PYTHONPATH), scratch
databases on the bench's server (`TICKQ_SCRATCH_URL`). One untimed check of each first builds
its scratch template (and prints whether the two printed the same); then each round runs
against, this, this, against. Embedded server only (the postmaster must be this machine's).
"""

from __future__ import annotations

import sys

sys.dont_write_bytecode = True  # before anything of the checkout is imported

import os  # noqa: E402
import resource  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import _common as c  # noqa: E402
import crontabs  # noqa: E402

HERE = Path(__file__).resolve().parent.parent
TICK = os.sysconf("SC_CLK_TCK")


def server_cpu(pid: int) -> float:
    """The postmaster's CPU and its reaped children's (every backend that ended), seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return sum(int(f) for f in fields[11:15]) / TICK


def check(code: Path, registry: Path, queue: str, server: str, postmaster: int
          ) -> tuple[float, float, float, str]:
    """wall, the check's process CPU, the server's CPU, what it printed (a queue first checked
    by this checkout is migrated by it: `tickq check` migrates where the role may)."""
    env = dict(os.environ, TICKQ_SCRATCH_URL=server, PYTHONPATH=str(code / "python_runner"))
    before, cpu, started = resource.getrusage(resource.RUSAGE_CHILDREN), server_cpu(postmaster), \
        time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "tickq.cli", "check", "--registry", str(registry),
                           "--database-url", queue], env=env, capture_output=True, text=True)
    wall, after = time.perf_counter() - started, resource.getrusage(resource.RUSAGE_CHILDREN)
    time.sleep(0.5)  # its backends ended and reaped
    own = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    if done.returncode not in (0, 1):
        raise SystemExit(f"check failed ({code}): {done.stderr.strip()}")
    return wall, own, server_cpu(postmaster) - cpu, done.stdout


def main() -> None:
    p = c.parser(__doc__.splitlines()[0])
    p.add_argument("--against", type=Path, required=True, help="the other checkout")
    p.add_argument("--rounds", type=int, default=2, help="rounds of four checks (default 2)")
    p.add_argument("--kinds", type=int, default=1000, help="many_crons kinds (default 1000)")
    args = p.parse_args()
    codes = {"against": args.against.resolve(), "this": HERE}
    with tempfile.TemporaryDirectory(prefix="tickq-bench-cpu-") as tmp, \
            c.server(None) as server, \
            c.fresh_database(server, "cpu_against", migrated=False) as other, \
            c.fresh_database(server, "cpu_this", migrated=False) as own:
        # A queue of each checkout's own (its first check migrates it): a check applies its
        # API files to a queue whose checksum differs, which one shared queue would pay for
        # at every change of checkout.
        queues = {"against": other, "this": own}
        registry = crontabs.many_crons(Path(tmp), args.kinds)
        import psycopg

        with psycopg.connect(server, autocommit=True) as conn:
            row = conn.execute("SELECT current_setting('data_directory')").fetchone()
        assert row is not None
        postmaster = int(Path(row[0], "postmaster.pid").read_text().split()[0])
        printed = {name: check(code, registry, queues[name], server, postmaster)[3]
                   for name, code in codes.items()}
        print(f"untimed first checks printed the same: {printed['against'] == printed['this']}")
        totals: dict[str, list[float]] = {name: [] for name in codes}
        for _ in range(args.rounds):
            for name in ("against", "this", "this", "against"):
                wall, mine, srv = check(codes[name], registry, queues[name], server,
                                        postmaster)[:3]
                totals[name].append(mine + srv)
                print(f"{name:8} wall {wall:6.2f} s  check {mine:5.2f} s  server {srv:6.2f} s"
                      f"  CPU {mine + srv:6.2f} s  load {os.getloadavg()[0]:.2f}", flush=True)
        mean = {name: statistics.mean(values) for name, values in totals.items()}
        print(f"mean CPU: against {mean['against']:.2f} s, this {mean['this']:.2f} s "
              f"({mean['this'] / mean['against'] - 1:+.1%})")


if __name__ == "__main__":
    main()
