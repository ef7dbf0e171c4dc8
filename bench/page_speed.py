#!/usr/bin/env python3
"""Time the status page (`tickq report`) over 1,000 kinds with 1,000,000 runs of history.

    .venv/bin/python bench/page_speed.py [--quick] [--reps N] [--database-url URL]

Loads 1,000 kinds (every 40 minutes, lanes cycling) and 1,000,000 finished runs (every tenth
failed, finished_at spread over the last ~29 days, so ~34,600 runs fall in the page's 24 hours),
ANALYZE, then --reps times (default 5): the page's queries (server time: the sum of EXPLAIN
ANALYZE execution times of each query the page runs), the whole collect() on the client, and
render() to HTML. Reference in the same invocation: `SELECT * FROM tickq.queue_status`, the
status view people already use. Target: the page's server time under 1 s. --quick: 200,000 runs.
"""

from __future__ import annotations

import statistics
import time
from datetime import date

import _common as c
import psycopg

from tickq import db
from tickq.page import render as page

KINDS = 1_000
TARGET_MS = 1000.0
PAGE_QUERIES = ("page_header", "page_dispatchers", "page_timeline", "page_waiting",
                "page_slots", "page_capacity", "upcoming", "page_kinds")
PARAMS = {"hours": 24, "now": None, "steps": 600, "limit": 50}


def server_ms(conn: psycopg.Connection, query: str, params: dict | None = None) -> float:
    rows = conn.execute(
        f"EXPLAIN (ANALYZE, TIMING OFF, SUMMARY ON) {query}", params or {}  # type: ignore[arg-type]
    ).fetchall()
    return c.explain_execution_ms(rows)


def main() -> None:
    p = c.parser(__doc__.split("\n\n")[0])
    p.add_argument("--reps", type=int, default=5, help="timed pages (default 5)")
    p.add_argument("--runs", type=int, help="history rows (default 1,000,000, quick 200,000)")
    args = p.parse_args()
    runs = args.runs or (200_000 if args.quick else 1_000_000)
    started = time.perf_counter()
    with (
        c.server(args.database_url) as server_url,
        c.fresh_database(server_url, "bench_report", args.keep) as url,
        psycopg.connect(url, autocommit=True) as conn,
    ):
        print(f"page_speed: {date.today()}, {c.server_info(conn)}")
        t0 = time.perf_counter()
        # Every 40 minutes: the cadence the history below has (~35 runs per kind per day).
        c.load_kinds(conn, KINDS, "now() + interval '1 minute' * (i % 40)", every="40 minutes",
                     slots=3)
        c.load_history(conn, KINDS, runs)
        (stored,) = conn.execute("SELECT count(*) FROM tickq.job_run").fetchone()  # type: ignore[misc]
        print(f"{KINDS:,} kinds, {stored:,} runs, loaded in {time.perf_counter() - t0:.0f} s")

        page.render(page.collect(conn))  # warm the cache and the plans
        per_query: dict[str, list[float]] = {name: [] for name in PAGE_QUERIES}
        servers, collects, renders, references, sizes = [], [], [], [], []
        for _ in range(args.reps):
            total = 0.0
            for name in PAGE_QUERIES:
                ms = server_ms(conn, db.load_query(name), PARAMS)
                per_query[name].append(ms)
                total += ms
            servers.append(total)
            references.append(server_ms(conn, "SELECT * FROM tickq.queue_status"))
            t = time.perf_counter()
            data = page.collect(conn)
            collects.append((time.perf_counter() - t) * 1000)
            t = time.perf_counter()
            html = page.render(data)
            renders.append((time.perf_counter() - t) * 1000)
            sizes.append(len(html.encode()))
        bars = len(data.timeline)

    med = statistics.median
    print(f"\n=== the status page over {KINDS:,} kinds, {stored:,} runs; {args.reps} pages")
    print(c.table(
        ["part", "median ms", "max ms"],
        [[f"server: {name}", f"{med(v):.1f}", f"{max(v):.1f}"] for name, v in per_query.items()]
        + [["server: all page queries", f"{med(servers):.1f}", f"{max(servers):.1f}"],
           ["client: collect() (queries + rows)", f"{med(collects):.1f}", f"{max(collects):.1f}"],
           ["client: render() to HTML", f"{med(renders):.1f}", f"{max(renders):.1f}"],
           ["reference: server, queue_status", f"{med(references):.1f}", f"{max(references):.1f}"]],
    ))
    print(f"\npage: {med(sizes) / 1e6:.2f} MB, {bars:,} timeline bars; "
          f"server time / queue_status: {med(servers) / med(references):.1f}x")
    print(f"target: page server time under {TARGET_MS:g} ms: "
          + ("met" if med(servers) < TARGET_MS else "NOT met"))
    print(f"total run time {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
