#!/usr/bin/env python3
"""Many runs falling due in the same minute: how long until every one has started, with the slot
limit held, and what a claim costs meanwhile, across 1, 4 and 8 dispatchers.

    .venv/bin/python bench/due_burst.py [--quick] [--kinds N ...] [--dispatchers N ...]
                                        [--slots N] [--run-ms MS] [--database-url URL]

Per size (default 1,000 and 10,000 kinds; --quick: 1,000) and dispatcher count (default 1, 4 and
8; --quick: 4): the kinds are loaded with `_common.load_kinds` (`every = "1h"`, lanes cycling),
all due at the same instant (the load's), `slots` (default 100) slot rows.
Then as many processes as dispatchers, each with its own connection and name, do what a
dispatcher's tick does with the database: `tickq.claim_jobs(free, name)` for what its share of
the slots leaves free, the claimed runs "run" for half to one and a half --run-ms (default 50
ms: a sleep, no program started), and each time one ends it is reported with
`tickq.report_run(..., 'ok', ...)` and the dispatcher claims again, until a claim finds nothing
due and every run it holds is reported. Printed per cell:

- started: the seconds from the instant they fell due (and from the dispatchers' start) to the
  last run's `claimed_at`, against two ticks of one minute;
- held: the most runs holding a slot at once, from job_run (a sweep over claimed_at and
  finished_at), against `slots`: the slot limit held;
- claim p50/p95/max (ms, the client's wall time of each claim that returned runs, a round trip)
  and the whole burst's wall time.

What it leaves out: the dispatcher's own process (its start, fork/exec of each command, the
watchdog threads) — the SQL path is what all dispatchers share, so it is what breaks first as
the count grows. Load from other work falls on every cell: print the load average.
"""

from __future__ import annotations

import heapq
import multiprocessing
import os
import statistics
import time

import _common as c
import psycopg

from tickq import db

CLAIM = "SELECT run_id FROM tickq.claim_jobs(%s, %s)"
REPORT = "SELECT 1 FROM tickq.report_run(%s, %s, 'ok', 0, NULL, %s::interval)"


def dispatcher(url: str, name: str, share: int, run_ms: int, out: multiprocessing.Queue) -> None:
    """One dispatcher's loop, as a tick's: claim what its share of the slots leaves free, and
    each time a run ends report it and claim again; runs last half to one and a half `run_ms`
    (by run id). Puts the wall time of each claim that returned runs on `out`."""
    claims: list[float] = []
    held: list[tuple[float, int]] = []  # (when it ends, run id), a heap
    with psycopg.connect(url, autocommit=True) as conn:
        while True:
            if len(held) < share:
                started = time.perf_counter()
                runs = [r[0] for r in conn.execute(CLAIM, (share - len(held), name)).fetchall()]
                if runs:
                    claims.append(time.perf_counter() - started)
                for run_id in runs:
                    ends = time.monotonic() + run_ms * (0.5 + run_id * 7919 % 101 / 100) / 1000
                    heapq.heappush(held, (ends, run_id))
            if not held:
                if not conn.execute("SELECT count(*) FROM tickq.job_kind WHERE run_id IS NULL"
                                    " AND due_at <= now()").fetchone()[0]:
                    break
                time.sleep(run_ms / 1000)  # every slot is taken by the others: wait a run
                continue
            ends, run_id = heapq.heappop(held)
            time.sleep(max(0.0, ends - time.monotonic()))
            conn.execute(REPORT, (run_id, name, f"{run_ms} milliseconds"))
    out.put(claims)


def burst(url: str, kinds: int, dispatchers: int, slots: int, run_ms: int) -> list[str]:
    with db.connect(url) as conn:
        c.load_kinds(conn, kinds, "now()", every="1 hour", slots=slots)
        due_at = conn.execute("SELECT min(due_at) FROM tickq.job_kind").fetchone()[0]
    out: multiprocessing.Queue = multiprocessing.Queue()
    share = max(1, slots // dispatchers)
    procs = [multiprocessing.Process(target=dispatcher, args=(url, f"bench-{n}", share, run_ms,
                                                              out)) for n in range(dispatchers)]
    began = time.time()
    for p in procs:
        p.start()
    claims = [ms for _ in procs for ms in out.get()]
    for p in procs:
        p.join()
    wall = time.time() - began
    with db.connect(url) as conn:
        runs, last, held = conn.execute(
            """
            SELECT (SELECT count(*) FROM tickq.job_run),
                   (SELECT max(claimed_at) FROM tickq.job_run),
                   (SELECT max(n) FROM (SELECT sum(d) OVER (ORDER BY at, d) AS n FROM (
                        SELECT claimed_at AS at, 1 AS d FROM tickq.job_run
                        UNION ALL SELECT finished_at, -1 FROM tickq.job_run) AS e) AS s)
            """).fetchone()
    claims.sort()
    p95 = claims[min(len(claims) - 1, int(len(claims) * 0.95))] * 1000
    from_due = (last - due_at).total_seconds()
    from_start = last.timestamp() - began
    return [f"{kinds:,}", str(dispatchers), f"{runs:,}",
            f"{from_due:.1f} s ({from_start:.1f} s)", "yes" if from_due <= 120 else "NO",
            f"{held} of {slots}", f"{statistics.median(claims) * 1000:.1f}", f"{p95:.1f}",
            f"{claims[-1] * 1000:.1f}", "yes" if p95 < 5 else "NO", f"{wall:.1f} s"]


def main() -> None:
    p = c.parser(__doc__.splitlines()[0])
    p.add_argument("--kinds", type=int, action="append")
    p.add_argument("--dispatchers", type=int, action="append")
    p.add_argument("--slots", type=int, default=100)
    p.add_argument("--run-ms", type=int, default=50)
    args = p.parse_args()
    sizes = args.kinds or ([1000] if args.quick else [1000, 10000])
    counts = args.dispatchers or ([4] if args.quick else [1, 4, 8])
    with c.server(args.database_url) as server, c.fresh_database(server, "burst") as url:
        with db.connect(url) as conn:
            print(c.server_info(conn), flush=True)
        rows = []
        for kinds in sizes:
            for dispatchers in counts:
                rows.append(burst(url, kinds, dispatchers, args.slots, args.run_ms))
                print(" | ".join(rows[-1]), flush=True)
        print()
        print(c.table(["kinds due", "dispatchers", "runs", "last started after due (start)",
                       "within 2 ticks", "most held", "claim p50 ms", "claim p95 ms",
                       "claim max ms", "p95 < 5 ms", "burst"], rows))
        print(f"load average after {', '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
