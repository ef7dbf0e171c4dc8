#!/usr/bin/env python3
"""Claim-and-report cycles per second through tickq's SQL API, next to a raw SKIP LOCKED queue.

    .venv/bin/python bench/cycle_throughput.py [--quick] [--seconds S] [--database-url URL]

Table: 10,000 kinds, all due (due_at one hour and more in the past), every = 1 second so a kind
reported is due again within a second, settings.slots = 1000, and 100,000 finished runs of
history loaded and analyzed first (the raw queue gets as many history rows). One cycle is

    SELECT * FROM tickq.claim_jobs(1, $dispatcher);                       -- autocommit
    SELECT * FROM tickq.report_run($run_id, $dispatcher, 'ok', 0, 'out', NULL);

At 1, 2 and 4 connections, each run for --seconds (default 10, quick 3) from the same starting
state, on the same server:

- tickq (python): each connection in its own process (psycopg 3, own dispatcher name);
- raw 1-tx: pgbench, a minimal queue on a plain table of the same size, one statement per cycle:
  claim one due row (FOR UPDATE SKIP LOCKED, ordered by due_at), move its due_at, insert a
  history row (one commit per cycle);
- tickq (pgbench) and raw 2-tx, for context: the tickq cycle driven by pgbench (same client as
  raw, so the difference is SQL only), and a raw queue that, like tickq, commits a lease first and
  the report second (two commits per cycle): the like-for-like comparison, with its own ratios
  (tickq (python) / raw 2-tx, and tickq (pgbench) / raw 2-tx).

- tickq pipelined: what the dispatcher does when a run finishes, each cycle one transaction that
  reports the previous run and claims the next (one commit per cycle, like raw 1-tx).

Cycles are counted from the history rows written ('ok' runs), not from the client (pipelined:
from the reports). Ratio = tickq (python) / raw 1-tx, and pipelined / raw 1-tx; target 0.7.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import subprocess
import tempfile
import time
from datetime import date
from pathlib import Path

import _common as c
import _queues as q
import psycopg

KINDS = 10_000
SLOTS = 1000
HISTORY = 100_000  # finished runs loaded before each run (10 per kind)
CONNECTIONS = (1, 2, 4)
TARGET_RATIO = 0.7
DUE = "now() - interval '1 hour' - make_interval(secs => i)"

RAW_SCHEMA = """
DROP TABLE IF EXISTS public.raw_run, public.raw_kind;
CREATE TABLE public.raw_kind (
    id integer PRIMARY KEY,
    due_at timestamptz NOT NULL,
    run_id bigint,
    leased_by text,
    leased_until timestamptz
);
CREATE INDEX raw_kind_claimable ON public.raw_kind (due_at) WHERE run_id IS NULL;
CREATE TABLE public.raw_run (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    kind_id integer NOT NULL,
    outcome text NOT NULL,
    claimed_at timestamptz NOT NULL,
    finished_at timestamptz
);
"""

RAW_1TX = """\
WITH c AS (
    SELECT id FROM raw_kind WHERE run_id IS NULL AND due_at <= now()
    ORDER BY due_at LIMIT 1 FOR UPDATE SKIP LOCKED
), u AS (
    UPDATE raw_kind AS k SET due_at = date_trunc('second', now()) + interval '1 second'
    FROM c WHERE k.id = c.id RETURNING k.id
)
INSERT INTO raw_run (kind_id, outcome, claimed_at, finished_at)
SELECT id, 'ok', now(), now() FROM u;
"""

RAW_2TX = """\
WITH c AS (SELECT id FROM raw_kind WHERE run_id IS NULL AND due_at <= now() ORDER BY due_at LIMIT 1 FOR UPDATE SKIP LOCKED), r AS (INSERT INTO raw_run (kind_id, outcome, claimed_at) SELECT id, 'running', now() FROM c RETURNING id, kind_id), u AS (UPDATE raw_kind AS k SET run_id = r.id, leased_by = 'raw', leased_until = now() + interval '5 minutes' FROM r WHERE k.id = r.kind_id RETURNING k.id, k.run_id) SELECT coalesce(max(id), 0) AS kid, coalesce(max(run_id), 0) AS rid FROM u \\gset
\\if :rid > 0
WITH f AS (UPDATE raw_run SET outcome = 'ok', finished_at = now() WHERE id = :rid) UPDATE raw_kind SET run_id = NULL, leased_by = NULL, leased_until = NULL, due_at = date_trunc('second', now()) + interval '1 second' WHERE id = :kid;
\\endif
"""  # noqa: E501  (pgbench wants each meta-command's query on one line)

TICKQ_PGBENCH = """\
SELECT coalesce(max(run_id), 0) AS rid FROM tickq.claim_jobs(1, 'pgbench-' || :client_id) \\gset
\\if :rid > 0
SELECT count(*) FROM tickq.report_run(:rid, 'pgbench-' || :client_id, 'ok', 0, 'out', NULL);
\\endif
"""


# ---------------------------------------------------------------- setup


def reset_tickq(conn: psycopg.Connection) -> None:
    # With history, as a queue in use has: analyzed while job_run was empty, the generic plans
    # of the foreign key checks scanned job_run whole, a cost that grew with every cycle run.
    q.load_kinds(conn, KINDS, DUE, every="1 second", slots=SLOTS)
    q.load_history(conn, KINDS, HISTORY)


def reset_raw(conn: psycopg.Connection) -> None:
    conn.execute(RAW_SCHEMA)  # type: ignore[arg-type]
    conn.execute(
        f"INSERT INTO public.raw_kind (id, due_at) SELECT i, {DUE}"  # type: ignore[arg-type]
        f" FROM generate_series(1, {KINDS}) AS i"
    )
    conn.execute(
        "INSERT INTO public.raw_run (kind_id, outcome, claimed_at, finished_at)"
        f" SELECT 1 + i % {KINDS}, 'ok', now(), now() FROM generate_series(1, {HISTORY}) AS i"
    )
    conn.execute("VACUUM ANALYZE public.raw_kind")
    conn.execute("VACUUM ANALYZE public.raw_run")


def last_id(conn: psycopg.Connection, table: str) -> int:
    (n,) = conn.execute(f"SELECT coalesce(max(id), 0) FROM {table}").fetchone()  # type: ignore[arg-type,misc]
    return n


def count_ok(conn: psycopg.Connection, table: str, after: int) -> int:
    """Runs reported 'ok' during the run: those with an id past the history loaded before it."""
    query = f"SELECT count(*) FROM {table} WHERE outcome = 'ok' AND id > {after}"
    (n,) = conn.execute(query).fetchone()  # type: ignore[arg-type,misc]
    return n


# ---------------------------------------------------------------- tickq from Python


def worker(url: str, dispatcher: str, start, seconds: float, results) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        claim = "SELECT run_id FROM tickq.claim_jobs(1, %s)"
        report = "SELECT * FROM tickq.report_run(%s, %s, 'ok', 0, 'out', NULL)"
        cycles = empty = 0
        start.wait()
        deadline = time.perf_counter() + seconds
        while time.perf_counter() < deadline:
            row = conn.execute(claim, (dispatcher,)).fetchone()
            if row is None:
                empty += 1
                continue
            conn.execute(report, (row[0], dispatcher)).fetchall()
            cycles += 1
        results.put((cycles, empty))


def pipelined_worker(url: str, dispatcher: str, start, seconds: float, results) -> None:
    """What the dispatcher does when a run finishes: report it and claim into the freed slot in
    one transaction, so one commit per cycle."""
    with psycopg.connect(url, autocommit=True) as conn:
        claim = "SELECT run_id FROM tickq.claim_jobs(1, %s)"
        report = "SELECT * FROM tickq.report_run(%s, %s, 'ok', 0, 'out', NULL)"
        cycles = empty = 0
        pending = None
        start.wait()
        deadline = time.perf_counter() + seconds
        while time.perf_counter() < deadline:
            with conn.transaction():
                if pending is not None:
                    conn.execute(report, (pending, dispatcher)).fetchall()
                    cycles += 1
                row = conn.execute(claim, (dispatcher,)).fetchone()
            pending = row[0] if row else None
            empty += row is None
        results.put((cycles, empty))


def run_python(
    url: str, clients: int, seconds: float, pipelined: bool = False
) -> tuple[float, int]:
    ctx = mp.get_context("fork")
    start, results = ctx.Event(), ctx.Queue()
    target = pipelined_worker if pipelined else worker
    procs = [
        ctx.Process(target=target, args=(url, f"bench-{i}", start, seconds, results))
        for i in range(clients)
    ]
    for p in procs:
        p.start()
    time.sleep(0.5)  # let every process connect before the clock starts
    t0 = time.perf_counter()
    start.set()
    got = [results.get(timeout=seconds + 60) for _ in procs]
    elapsed = time.perf_counter() - t0
    for p in procs:
        p.join()
    return sum(g[0] for g in got) / elapsed, sum(g[1] for g in got)


# ---------------------------------------------------------------- pgbench


def run_pgbench(url: str, script: Path, clients: int, seconds: float) -> str:
    params = c.db.url_params(url)
    cmd = [str(c.bin_dir() / "pgbench"), "-n", "-M", "prepared", "-f", str(script)]
    cmd += ["-c", str(clients), "-j", str(clients), "-T", str(round(seconds))]
    for flag, key in (("-h", "host"), ("-p", "port"), ("-U", "user")):
        if params.get(key):
            cmd += [flag, params[key]]
    cmd.append(params["dbname"])
    env = {**os.environ, **({"PGPASSWORD": params["password"]} if "password" in params else {})}
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"pgbench failed:\n{' '.join(cmd)}\n{done.stdout}\n{done.stderr}")
    lines = [ln for ln in done.stdout.splitlines() if ln.startswith(("tps", "latency average"))]
    return "; ".join(lines)


# ---------------------------------------------------------------- main


def main() -> None:
    p = c.parser(__doc__.split("\n\n")[0])
    p.add_argument("--seconds", type=float, help="seconds per run (default 10, quick 3)")
    args = p.parse_args()
    seconds = args.seconds or (3.0 if args.quick else 10.0)
    started = time.perf_counter()
    rows: list[list[str]] = []
    worst = worst_pipe = float("inf")
    with (
        c.server(args.database_url) as server_url,
        c.fresh_database(server_url, "bench_cycle", args.keep) as url,
        psycopg.connect(url, autocommit=True) as admin,
        tempfile.TemporaryDirectory(prefix="tickq-pgbench-") as tmp,
    ):
        print(f"cycle_throughput: {date.today()}, {c.server_info(admin)}")
        print(f"{KINDS:,} kinds all due, every 1 second, slots {SLOTS}, {seconds:g} s per run\n")
        scripts = {}
        for name, text in (("raw_1tx", RAW_1TX), ("raw_2tx", RAW_2TX), ("tickq", TICKQ_PGBENCH)):
            scripts[name] = Path(tmp) / f"{name}.sql"
            scripts[name].write_text(text)
        for clients in CONNECTIONS:
            reset_tickq(admin)
            before = last_id(admin, "tickq.job_run")
            py_rate, empty = run_python(url, clients, seconds)
            py_check = count_ok(admin, "tickq.job_run", before) / seconds
            print(
                f"{clients} conn  tickq (python)  {py_rate:8.0f} cycles/s"
                f" (history rows/s {py_check:.0f}, empty claims {empty})",
                flush=True,
            )

            reset_tickq(admin)
            pipe_rate, _ = run_python(url, clients, seconds, pipelined=True)
            print(f"{clients} conn  tickq pipelined {pipe_rate:8.0f} cycles/s", flush=True)

            reset_tickq(admin)
            before = last_id(admin, "tickq.job_run")
            info = run_pgbench(url, scripts["tickq"], clients, seconds)
            tq_pgb = count_ok(admin, "tickq.job_run", before) / seconds
            print(f"{clients} conn  tickq (pgbench) {tq_pgb:8.0f} cycles/s  [{info}]", flush=True)

            rates = {}
            for name in ("raw_1tx", "raw_2tx"):
                reset_raw(admin)
                before = last_id(admin, "public.raw_run")
                info = run_pgbench(url, scripts[name], clients, seconds)
                rates[name] = count_ok(admin, "public.raw_run", before) / seconds
                print(
                    f"{clients} conn  {name:<15} {rates[name]:8.0f} cycles/s  [{info}]", flush=True
                )
            ratio = py_rate / rates["raw_1tx"]
            worst = min(worst, ratio)
            worst_pipe = min(worst_pipe, pipe_rate / rates["raw_1tx"])
            rows.append(
                [
                    str(clients),
                    f"{py_rate:.0f}",
                    f"{rates['raw_1tx']:.0f}",
                    f"{ratio:.2f}",
                    f"{pipe_rate:.0f}",
                    f"{pipe_rate / rates['raw_1tx']:.2f}",
                    f"{tq_pgb:.0f}",
                    f"{rates['raw_2tx']:.0f}",
                    f"{py_rate / rates['raw_2tx']:.2f}",
                    f"{tq_pgb / rates['raw_2tx']:.2f}",
                ]
            )
    headers = [
        "connections", "tickq cycles/s", "raw cycles/s (1-tx)", "ratio",
        "tickq pipelined (1 commit)", "pipelined / raw 1-tx",
        "tickq via pgbench", "raw 2-tx (lease+report)", "tickq / raw 2-tx",
        "tickq pgbench / raw 2-tx",
    ]  # fmt: skip
    print("\n=== claim-and-report cycles per second")
    print(c.table(headers, rows))
    for label, value in (("tickq / raw", worst), ("tickq pipelined / raw", worst_pipe)):
        verdict = "met" if value >= TARGET_RATIO else "NOT met"
        print(f"target: ratio {label} >= {TARGET_RATIO} at every connection count: {verdict}")
    print(f"total run time {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
