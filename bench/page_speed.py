#!/usr/bin/env python3
"""Time the status page (`tickq report`) over 1,000 kinds with 1,000,000 runs of history.

    .venv/bin/python bench/page_speed.py [--quick] [--reps N] [--database-url URL] [--against DIR]

Loads 1,000 kinds (every 40 minutes, lanes cycling) and 1,000,000 finished runs (every tenth
failed, finished_at spread over the last ~29 days, so ~34,600 runs fall in the page's 24 hours),
ANALYZE, then --reps times (default 5): the page's queries (server time: the sum of EXPLAIN
ANALYZE execution times of each query the page runs), the whole collect() on the client, and
render() to HTML. Reference in the same invocation: `SELECT * FROM tickq.queue_status`, the
status view people already use. Target: the page's server time under 1 s. --quick: 200,000 runs.

With --against DIR (a checkout with this one's migrations, e.g. `git archive main sql | tar -x
-C DIR`), a copy of the loaded database (CREATE DATABASE ... TEMPLATE) gets DIR's `sql/` applied
with this checkout's migrator (DIR's functions), and each rep measures its page queries' server
time right after this checkout's: the ratio of each pair, under the same load, is printed.
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import time
from datetime import date
from pathlib import Path

import _common as c
import _queues as q
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


def page_server_ms(conn: psycopg.Connection, per_query: dict[str, list[float]]) -> float:
    total = 0.0
    for name in PAGE_QUERIES:
        ms = server_ms(conn, db.load_query(name), PARAMS)
        per_query[name].append(ms)
        total += ms
    return total


def against_copy(server_url: str, url: str, against: Path, stack: contextlib.ExitStack) -> str:
    """A copy of the loaded database at `url` with `against`'s sql/ applied; dropped at exit."""
    source = psycopg.conninfo.conninfo_to_dict(url)["dbname"]
    name = f"{source}_against"
    with psycopg.connect(server_url, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}" TEMPLATE "{source}"')  # type: ignore[arg-type]
    stack.callback(db.drop_database, server_url, name)
    copy = psycopg.conninfo.make_conninfo(url, dbname=name)
    with psycopg.connect(copy, autocommit=True) as conn:
        db.migrate(conn, against / "sql")
        q.vacuum_analyze(conn)
    return copy


def main() -> None:
    p = c.parser(__doc__.split("\n\n")[0])
    p.add_argument("--reps", type=int, default=5, help="timed pages (default 5)")
    p.add_argument("--runs", type=int, help="history rows (default 1,000,000, quick 200,000)")
    p.add_argument("--against", type=Path, help="a checkout whose sql/ to pair against")
    args = p.parse_args()
    runs = args.runs or (200_000 if args.quick else 1_000_000)
    started = time.perf_counter()
    with (
        c.server(args.database_url) as server_url,
        c.fresh_database(server_url, "bench_report", args.keep) as url,
        contextlib.ExitStack() as stack,
    ):
        with psycopg.connect(url, autocommit=True) as conn:
            print(f"page_speed: {date.today()}, {c.server_info(conn)}")
            t0 = time.perf_counter()
            # Every 40 minutes: the cadence the history below has (~35 runs per kind per day).
            q.load_kinds(conn, KINDS, "now() + interval '1 minute' * (i % 40)",
                         every="40 minutes", slots=3)
            q.load_history(conn, KINDS, runs)
            (stored,) = conn.execute("SELECT count(*) FROM tickq.job_run").fetchone()  # type: ignore[misc]
            print(f"{KINDS:,} kinds, {stored:,} runs, loaded in {time.perf_counter() - t0:.0f} s")
        other = stack.enter_context(psycopg.connect(
            against_copy(server_url, url, args.against, stack), autocommit=True
        )) if args.against else None
        conn = stack.enter_context(psycopg.connect(url, autocommit=True))
        measure(conn, other, args, stored, started)


def measure(conn: psycopg.Connection, other: psycopg.Connection | None,
            args: argparse.Namespace, stored: int, started: float) -> None:
    page.render(page.collect(conn))  # warm the cache and the plans
    if other is not None:
        page_server_ms(other, {name: [] for name in PAGE_QUERIES})
    per_query: dict[str, list[float]] = {name: [] for name in PAGE_QUERIES}
    per_other: dict[str, list[float]] = {name: [] for name in PAGE_QUERIES}
    servers, collects, renders, references, sizes, others = [], [], [], [], [], []
    for _ in range(args.reps):
        servers.append(page_server_ms(conn, per_query))
        if other is not None:
            others.append(page_server_ms(other, per_other))
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
           ["reference: server, queue_status", f"{med(references):.1f}", f"{max(references):.1f}"]]
        + [[f"against: {name}", f"{med(v):.1f}", f"{max(v):.1f}"] for name, v in per_other.items()
           if v]
        + ([["against: all page queries", f"{med(others):.1f}", f"{max(others):.1f}"]]
           if others else []),
    ))
    print(f"\npage: {med(sizes) / 1e6:.2f} MB, {bars:,} timeline bars; "
          f"server time / queue_status: {med(servers) / med(references):.1f}x")
    pairs = [a / b for a, b in zip(servers, others, strict=False)]
    if pairs:
        print(f"server time / {args.against}'s, pair by pair: median {med(pairs):.2f} "
              f"({', '.join(f'{r:.2f}' for r in pairs)})")
    print(f"target: page server time under {TARGET_MS:g} ms: "
          + ("met" if med(servers) < TARGET_MS else "NOT met"))
    print(f"total run time {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
