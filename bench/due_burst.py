#!/usr/bin/env python3
"""Many runs falling due in the same minute: how long until every one has started, with the slot
limit held, and what a claim costs meanwhile, across 1, 4 and 8 dispatchers.

    .venv/bin/python bench/due_burst.py [--quick] [--kinds N ...] [--dispatchers N ...]
                                        [--slots N] [--run-ms MS] [--sample-ms MS]
                                        [--database-url URL]

Per size (default 1,000 and 10,000 kinds; --quick: 1,000) and dispatcher count (default 1, 4 and
8; --quick: 4): the kinds are loaded with `_queues.load_kinds` (`every = "1h"`, lanes cycling),
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
- claim p50/p95/max (ms) of each claim that returned runs, four ways: `server`, its execution
  inside the server (clock_timestamp() before and after the call, in a wrapper function of the
  bench's database: no round trip, no parse, no commit; what bench/claim_latency.py's EXPLAIN
  ANALYZE times); `cpu`, what the backend spent on a core meanwhile, and `queue`, what it
  spent runnable waiting for one (the backend's /proc/self/schedstat read before and after in
  the same wrapper, nanoseconds; blank when the server cannot read it); `blocked`, the rest of
  the server time (server - cpu - queue: asleep on a lock, a buffer or I/O); and `client`, the
  dispatcher's wall time of the round trip, commit included;
- waits: what the claims in progress were waiting on, sampled from pg_stat_activity every
  --sample-ms (default 10) by one more connection: the share of samples per wait event (none:
  on a core or waiting for one), and the most claims seen waiting on a heavyweight lock at
  once (a tuple or transaction lock: one claim waiting for another's row);
- claims: how many returned runs (the timed ones) and how many came back empty (nothing due
  left to take: the burst's tail, each report then followed by an empty claim; the shares of
  the slots add up to at most `slots`, so a claim never finds every slot row taken by others
  unless a run is reported late);
- and the whole burst's wall time.

What it leaves out: the dispatcher's own process (its start, fork/exec of each command, the
watchdog threads) — the SQL path is what all dispatchers share, so it is what breaks first as
the count grows. Load from other work falls on every cell: the load average is printed with each.
"""

from __future__ import annotations

import collections
import heapq
import multiprocessing
import os
import time

import _common as c
import _queues as q
import psycopg

from tickq import db

# The claim, timed inside the server: the call's execution and, when the server may read its
# backend's /proc/self/schedstat (a superuser on Linux), the backend's time on a core and
# waiting for one (nanoseconds) over the same span. In the bench's database only.
WRAPPER = """
CREATE OR REPLACE FUNCTION public.bench_schedstat() RETURNS bigint[] LANGUAGE plpgsql AS $$
BEGIN
    -- Reading /proc/self/stat brings the running backend's own CPU time up to date first
    -- (schedstat alone moves only when the backend leaves a core).
    PERFORM length(pg_read_file('/proc/self/stat'));
    RETURN string_to_array(btrim(pg_read_file('/proc/self/schedstat'), E' \\n'), ' ')::bigint[];
END
$$;
CREATE OR REPLACE FUNCTION public.bench_claim(
    p_limit integer, p_dispatcher text, p_schedstat boolean,
    OUT runs bigint[], OUT server_ms float8, OUT cpu_ms float8, OUT queue_ms float8
) LANGUAGE plpgsql AS $$
DECLARE
    v_began timestamptz;
    v_before bigint[];
    v_after bigint[];
BEGIN
    IF p_schedstat THEN
        v_before := public.bench_schedstat();
    END IF;
    v_began := clock_timestamp();
    runs := ARRAY(SELECT c.run_id FROM tickq.claim_jobs(p_limit, p_dispatcher) AS c);
    server_ms := extract(EPOCH FROM clock_timestamp() - v_began) * 1000;
    IF p_schedstat THEN
        v_after := public.bench_schedstat();
        cpu_ms := (v_after[1] - v_before[1]) / 1e6;
        queue_ms := (v_after[2] - v_before[2]) / 1e6;
    END IF;
END
$$;
"""
CLAIM = "SELECT runs, server_ms, cpu_ms, queue_ms FROM public.bench_claim(%s, %s, %s)"
REPORT = "SELECT 1 FROM tickq.report_run(%s, %s, 'ok', 0, NULL, %s::interval)"
WAITING = """
SELECT coalesce(wait_event_type || ':' || wait_event, 'none') FROM pg_stat_activity
WHERE state = 'active' AND query LIKE 'SELECT runs, server_ms%' AND pid <> pg_backend_pid()
"""


def can_read_schedstat(url: str) -> bool:
    """Whether the server's backends may read their own /proc/self/schedstat."""
    with psycopg.connect(url, autocommit=True) as conn:
        try:
            return conn.execute("SELECT pg_read_file('/proc/self/schedstat', true) IS NOT NULL"
                                " AND pg_read_file('/proc/self/stat', true) IS NOT NULL"
                                ).fetchone()[0]
        except psycopg.Error:
            return False


def dispatcher(url: str, name: str, share: int, run_ms: int, schedstat: bool,
               out: multiprocessing.Queue) -> None:
    """One dispatcher's loop, as a tick's: claim what its share of the slots leaves free, and
    each time a run ends report it and claim again; runs last half to one and a half `run_ms`
    (by run id). Puts (client, server, cpu, queue) ms of each claim that returned runs on `out`,
    and how many returned none."""
    claims: list[tuple[float, float, float | None, float | None]] = []
    empty = 0  # claims that found nothing to take
    held: list[tuple[float, int]] = []  # (when it ends, run id), a heap
    with psycopg.connect(url, autocommit=True) as conn:
        while True:
            if len(held) < share:
                started = time.perf_counter()
                runs, server, cpu, queue = conn.execute(
                    CLAIM, (share - len(held), name, schedstat)).fetchone()
                if runs:
                    claims.append(((time.perf_counter() - started) * 1000, server, cpu, queue))
                else:
                    empty += 1
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
    out.put((claims, empty))


def sampler(url: str, every_ms: int, stop, out: multiprocessing.Queue) -> None:
    """What the claims in progress wait on, every `every_ms` until `stop` is set: a count per
    wait event, and the most claims waiting on a heavyweight lock (Lock:...) at once."""
    seen: collections.Counter[str] = collections.Counter()
    most_locked = 0
    with psycopg.connect(url, autocommit=True) as conn:
        while not stop.is_set():
            events = [r[0] for r in conn.execute(WAITING).fetchall()]
            seen.update(events)
            most_locked = max(most_locked, sum(e.startswith("Lock:") for e in events))
            time.sleep(every_ms / 1000)
    out.put((dict(seen), most_locked))


def quantiles(values: list[float]) -> str:
    """p50/p95/max of `values` (ms), or '-' when there are none."""
    if not values:
        return "-"
    s = c.summarize(values)
    return f"{s.median:.2f} / {s.p95:.2f} / {max(values):.2f}"


def waits_text(seen: dict[str, int]) -> str:
    """The share of samples per wait event, the largest first."""
    total = sum(seen.values()) or 1
    return ", ".join(f"{event} {n * 100 / total:.0f}%"
                     for event, n in sorted(seen.items(), key=lambda x: -x[1])[:4]) or "-"


def run_dispatchers(url: str, dispatchers: int, slots: int, run_ms: int, sample_ms: int
                    ) -> tuple[list[tuple], dict[str, int], int, float]:
    """The burst itself: the dispatcher processes and the sampler, until every run is
    reported. Returns the claims' timings, the wait samples, the most claims waiting on a
    lock at once, and when the dispatchers were started (epoch seconds)."""
    out: multiprocessing.Queue = multiprocessing.Queue()
    waits: multiprocessing.Queue = multiprocessing.Queue()
    stop = multiprocessing.Event()
    schedstat = can_read_schedstat(url)
    share = max(1, slots // dispatchers)
    procs = [multiprocessing.Process(target=dispatcher, args=(
        url, f"bench-{n}", share, run_ms, schedstat, out)) for n in range(dispatchers)]
    watch = multiprocessing.Process(target=sampler, args=(url, sample_ms, stop, waits))
    watch.start()
    began = time.time()
    for p in procs:
        p.start()
    claims, empty = [], 0
    for _ in procs:
        theirs, none = out.get()
        claims += theirs
        empty += none
    for p in procs:
        p.join()
    stop.set()
    seen, most_locked = waits.get()
    watch.join()
    return claims, empty, seen, most_locked, began


def burst(url: str, kinds: int, dispatchers: int, slots: int, run_ms: int, sample_ms: int
          ) -> list[str]:
    with db.connect(url) as conn:
        q.load_kinds(conn, kinds, "now()", every="1 hour", slots=slots)
        conn.execute(WRAPPER)
        conn.commit()
        due_at = conn.execute("SELECT min(due_at) FROM tickq.job_kind").fetchone()[0]
    load = os.getloadavg()[0]
    claims, empty, seen, most_locked, began = run_dispatchers(url, dispatchers, slots, run_ms,
                                                       sample_ms)
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
    client, server, cpu, queue = ([x for x in column if x is not None] for column in zip(*claims))
    blocked = [max(0.0, s - u - q) for _, s, u, q in claims if u is not None]
    from_due = (last - due_at).total_seconds()
    return [f"{kinds:,}", str(dispatchers), f"{runs:,}",
            f"{from_due:.1f} s ({last.timestamp() - began:.1f} s)",
            "yes" if from_due <= 120 else "NO", f"{held} of {slots}", quantiles(server),
            quantiles(cpu), quantiles(queue), quantiles(blocked), quantiles(client),
            "yes" if c.summarize(server).p95 < 5 else "NO", waits_text(seen), str(most_locked),
            f"{len(claims):,} / {empty:,}", f"{wall:.1f} s", f"{load:.1f}-{os.getloadavg()[0]:.1f}"]


HEADERS = ["kinds due", "dispatchers", "runs", "last started after due (start)",
           "within 2 ticks", "most held", "server ms p50/p95/max", "cpu ms", "queue ms",
           "blocked ms", "client ms", "server p95 < 5 ms", "claims waiting on (samples)",
           "most on a lock at once", "claims with runs / empty", "burst", "load"]


def main() -> None:
    p = c.parser(__doc__.splitlines()[0])
    p.add_argument("--kinds", type=int, action="append")
    p.add_argument("--dispatchers", type=int, action="append")
    p.add_argument("--slots", type=int, default=100)
    p.add_argument("--run-ms", type=int, default=50)
    p.add_argument("--sample-ms", type=int, default=10)
    args = p.parse_args()
    sizes = args.kinds or ([1000] if args.quick else [1000, 10000])
    counts = args.dispatchers or ([4] if args.quick else [1, 4, 8])
    with c.server(args.database_url) as server, c.fresh_database(server, "burst") as url:
        with db.connect(url) as conn:
            print(c.server_info(conn), flush=True)
        rows = []
        for kinds in sizes:
            for dispatchers in counts:
                rows.append(burst(url, kinds, dispatchers, args.slots, args.run_ms,
                                  args.sample_ms))
                print(" | ".join(rows[-1]), flush=True)
        print()
        print(c.table(HEADERS, rows))
        print(f"load average after {', '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
