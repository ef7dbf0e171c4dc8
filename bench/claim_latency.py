#!/usr/bin/env python3
"""Latency of one tickq.claim_jobs(3, 'bench', now()) call, by table size and due shape.

    .venv/bin/python bench/claim_latency.py [--quick] [--reps N] [--database-url URL]

For 1k, 10k, 100k and 1M kinds (--quick: up to 100k) and three shapes (every kind due, 1% due,
none due: an empty poll), each claim runs in a transaction that is rolled back, so every
repetition sees the same table. Reported per cell, in ms:

- claim server: EXPLAIN (ANALYZE, TIMING OFF) execution time of the call (server side, no
  network, no planning);
- claim client: wall time of the same SELECT as the client sees it (one round trip);
- bare server: the same server time for a bare
  ``SELECT ... WHERE enabled AND (NOT irreversible OR armed_at IS NOT NULL) AND run_id IS NULL
  AND due_at <= now() ORDER BY priority, due_at
  LIMIT 3 FOR UPDATE SKIP LOCKED`` (the least any claim can cost), and claim/bare.

At the largest size it prints EXPLAIN (ANALYZE, BUFFERS) of the candidate and pick queries of
claim_jobs, taken from sql/api/03_claim.sql with the settings substituted, of the bare query,
and (auto_explain) the plans of every statement claim_jobs runs. Target: under 1 ms everywhere.

Each cell is measured again with weights and pools present (bench/_queues.py weigh_kinds: every
tenth kind of weight 2 or 3 in one of three pools, so every claim takes tickq.claim_fit's path),
and the last table gives both server times and their ratio (target: under 1 ms p95, and at most
1.1x the claim without them).
"""

from __future__ import annotations

import re
import time
from datetime import date

import _common as c
import _queues as q
import psycopg
from psycopg import sql

TARGET_MS = 1.0
CLAIM = "SELECT * FROM tickq.claim_jobs(3, 'bench', now())"
BARE = (
    "SELECT name FROM tickq.job_kind"
    " WHERE enabled AND (NOT irreversible OR armed_at IS NOT NULL) AND run_id IS NULL"
    " AND due_at <= now()"
    " ORDER BY priority, due_at LIMIT 3 FOR UPDATE SKIP LOCKED"
)
SHAPE_LABEL = {"all": "all due", "pct1": "1% due", "none": "none due"}


def timed_server(conn: psycopg.Connection, query: str) -> float:
    """Server execution time (ms) of ``query`` in a transaction that is rolled back."""
    try:
        rows = conn.execute(
            f"EXPLAIN (ANALYZE, TIMING OFF, COSTS OFF, SUMMARY ON) {query}"  # type: ignore[arg-type]
        ).fetchall()
        return c.explain_execution_ms(rows)
    finally:
        conn.rollback()


def timed_client(conn: psycopg.Connection, query: str) -> tuple[float, int]:
    """Client wall time (ms) of ``query`` and its row count, in a rolled-back transaction."""
    try:
        conn.execute("SELECT 1")  # opens the transaction outside the timed part
        start = time.perf_counter()
        count = len(conn.execute(query).fetchall())  # type: ignore[arg-type]
        return (time.perf_counter() - start) * 1000, count
    finally:
        conn.rollback()


def measure(conn: psycopg.Connection, reps: int) -> dict[str, object]:
    for _ in range(10):  # warm the caches and plpgsql's plan cache (generic plans: forced)
        timed_server(conn, CLAIM)
        timed_client(conn, CLAIM)
        timed_server(conn, BARE)
    claim_server, claim_client, bare_server, claimed = [], [], [], set()
    for _ in range(reps):  # interleaved so drift (autovacuum, checkpoints) hits both alike
        claim_server.append(timed_server(conn, CLAIM))
        ms, count = timed_client(conn, CLAIM)
        claim_client.append(ms)
        claimed.add(count)
        bare_server.append(timed_server(conn, BARE))
    return {
        "claim_server": c.summarize(claim_server),
        "claim_client": c.summarize(claim_client),
        "bare_server": c.summarize(bare_server),
        "claimed": "/".join(str(n) for n in sorted(claimed)),
    }


# ---------------------------------------------------------------- the queries inside claim_jobs


def claim_source() -> str:
    return (c.REPO / "sql" / "api" / "03_claim.sql").read_text(encoding="utf-8")


def extract_array_query(source: str, variable: str) -> str:
    """The query of ``variable := ARRAY( ... );`` in claim_jobs."""
    body = source[source.index("FUNCTION tickq.claim_jobs(") :]
    match = re.search(rf"{variable} := ARRAY\((.*?)\n    \);", body, re.DOTALL)
    if not match:
        raise SystemExit(f"claim_latency: no '{variable} := ARRAY(...);' in 03_claim.sql")
    return match.group(1).strip()


def substitute(query: str, values: dict[str, str]) -> str:
    for name, value in values.items():
        query = re.sub(rf"\b{re.escape(name)}\b", value, query)
    return query


def explain(conn: psycopg.Connection, title: str, query: str) -> None:
    print(f"\n--- {title}\n{query}\n")
    try:
        for (line,) in conn.execute(f"EXPLAIN (ANALYZE, BUFFERS) {query}"):  # type: ignore[arg-type]
            print(f"    {line}")
    finally:
        conn.rollback()


def explain_inside_claim(conn: psycopg.Connection) -> None:
    """auto_explain's plans of every statement claim_jobs runs, sent back as NOTICEs."""
    notices: list[str] = []

    def on_notice(diag: psycopg.errors.Diagnostic) -> None:
        notices.append(diag.message_primary or "")

    conn.add_notice_handler(on_notice)
    try:
        conn.execute("LOAD 'auto_explain'")
        for name, value in [
            ("auto_explain.log_min_duration", "0"),
            ("auto_explain.log_analyze", "on"),
            ("auto_explain.log_buffers", "on"),
            ("auto_explain.log_nested_statements", "on"),
            ("auto_explain.log_level", "notice"),
        ]:
            conn.execute("SELECT set_config(%s, %s, true)", (name, value))
        conn.execute(CLAIM).fetchall()  # type: ignore[arg-type]
    except psycopg.Error as exc:
        print(f"\n--- auto_explain not available ({exc.sqlstate}: {exc}); skipped")
        return
    finally:
        conn.rollback()
        conn.remove_notice_handler(on_notice)
    print("\n--- auto_explain: every statement claim_jobs ran (one call, rolled back)")
    for notice in notices:
        for line in notice.splitlines():
            print(f"    {line}")


def explain_claim_queries(conn: psycopg.Connection, shape: str) -> None:
    source = claim_source()
    (stale_after,) = conn.execute("SELECT stale_after::text FROM tickq.settings").fetchone()  # type: ignore[misc]
    # v_slots: the free slot rows claim_jobs took first (at most p_limit of them).
    free = [
        r[0]
        for r in conn.execute(
            "SELECT sl.n FROM tickq.slot AS sl, tickq.settings AS s"
            " WHERE sl.run_id IS NULL AND sl.n <= s.slots ORDER BY sl.n LIMIT 3"
        )
    ]
    conn.rollback()
    values = {
        "v_settings.stale_after": f"interval '{stale_after}'",
        "v_stale": f"(now() - interval '{stale_after}')",
        "v_agents": "true",  # the bench's claimer never synced: it may claim agents
        "p_limit": "3",
        "p_now": "now()",
        "v_slots": sql.Literal(free).as_string(conn) + "::integer []",
    }
    candidates_sql = substitute(extract_array_query(source, "v_candidates"), values)
    print(f"\n=== EXPLAIN at the largest size, shape: {SHAPE_LABEL[shape]}")
    explain(conn, "candidates (v_candidates)", candidates_sql)
    try:
        names = [r[0] for r in conn.execute(candidates_sql)]  # type: ignore[arg-type]
    finally:
        conn.rollback()
    if names:
        array = sql.Literal(names).as_string(conn) + "::text []"
        pick_sql = substitute(
            extract_array_query(source, "v_picked"), {**values, "v_candidates": array}
        )
        explain(conn, "pick (v_picked)", pick_sql)
    else:
        print("\n--- pick (v_picked): not run by claim_jobs, no candidates")
    explain(conn, "bare reference query", BARE)
    explain_inside_claim(conn)


# ---------------------------------------------------------------- main


def main() -> None:
    p = c.parser(__doc__.split("\n\n")[0])
    p.add_argument("--reps", type=int, help="repetitions per cell (default 200, quick 100)")
    args = p.parse_args()
    sizes = [1_000, 10_000, 100_000] if args.quick else [1_000, 10_000, 100_000, 1_000_000]
    reps = args.reps or (100 if args.quick else 200)
    started = time.perf_counter()
    results: list[list[str]] = []
    weights: list[list[str]] = []
    over: list[str] = []
    over_median: list[str] = []
    with (
        c.server(args.database_url) as server_url,
        c.fresh_database(server_url, "bench_claim", args.keep) as url,
        psycopg.connect(url, autocommit=True) as admin,
        psycopg.connect(url) as conn,
    ):
        print(f"claim_latency: {date.today()}, {c.server_info(admin)}")
        print(f"sizes {sizes}, {reps} repetitions per cell, times in ms\n")
        for size in sizes:
            # "none" is loaded, "pct1" made from it by updating 1% of the rows, "all" reloaded.
            for shape in ("none", "pct1", "all"):
                t0 = time.perf_counter()
                if shape == "pct1":
                    q.make_pct1_due(admin)
                else:
                    q.load_kinds(admin, size, q.DUE_SHAPES[shape])
                (due,) = admin.execute(
                    "SELECT count(*) FROM tickq.job_kind WHERE due_at <= now()"
                ).fetchone()  # type: ignore[misc]
                load_s = time.perf_counter() - t0
                m = measure(conn, reps)
                q.weigh_kinds(admin, True)  # the same queue with weights and pools present
                weighed = measure(conn, reps)["claim_server"]
                q.weigh_kinds(admin, False)
                cs, cc, bs = m["claim_server"], m["claim_client"], m["bare_server"]
                assert isinstance(weighed, c.Summary)
                weights.append([f"{size:,}", SHAPE_LABEL[shape], f"{cs.median:.3f}",
                                f"{cs.p95:.3f}", f"{weighed.median:.3f}", f"{weighed.p95:.3f}",
                                f"{weighed.median / cs.median:.2f}x" if cs.median else "-",
                                "ok" if weighed.p95 < TARGET_MS else "OVER"])
                assert isinstance(cs, c.Summary)
                assert isinstance(cc, c.Summary)
                assert isinstance(bs, c.Summary)
                ratio = cs.median / bs.median if bs.median else float("nan")
                verdict = "ok" if cs.p95 < TARGET_MS else "OVER"
                if verdict == "OVER":
                    over.append(f"{size} kinds, {SHAPE_LABEL[shape]}")
                if cs.median >= TARGET_MS:
                    over_median.append(f"{size} kinds, {SHAPE_LABEL[shape]}")
                row = [
                    f"{size:,}",
                    SHAPE_LABEL[shape],
                    f"{due:,}",
                    str(m["claimed"]),
                    f"{cs.median:.3f}",
                    f"{cs.p95:.3f}",
                    f"{cc.median:.3f}",
                    f"{cc.p95:.3f}",
                    f"{bs.median:.3f}",
                    f"{bs.p95:.3f}",
                    f"{ratio:.1f}x",
                    verdict,
                ]
                results.append(row)
                print(
                    f"{size:>9,} {SHAPE_LABEL[shape]:<8} claim server {cs} | client {cc} | "
                    f"bare server {bs} | load {load_s:.1f}s",
                    flush=True,
                )
                if size == sizes[-1]:
                    explain_claim_queries(conn, shape)
                    print()
    headers = [
        "kinds", "shape", "due", "claimed", "claim srv med", "claim srv p95",
        "claim cli med", "claim cli p95", "bare srv med", "bare srv p95", "claim/bare", "<1ms p95",
    ]  # fmt: skip
    print("\n=== claim_jobs(3) latency, ms (srv: EXPLAIN ANALYZE execution time; cli: round trip)")
    print(c.table(headers, results))
    print("\n=== claim_jobs(3) server time, ms, without and with weights and pools present"
          " (every tenth kind of weight 2-3 in one of three pools: tickq.claim_fit's path)")
    print(c.table(["kinds", "shape", "plain med", "plain p95", "weighted med", "weighted p95",
                   "weighted/plain", "<1ms p95"], weights))
    for label, cells in (("median", over_median), ("p95", over)):
        print(f"\ntarget: {label} server time under {TARGET_MS} ms in every cell: ", end="")
        print("met" if not cells else f"NOT met in {len(cells)} cells: {'; '.join(cells)}")
    print(f"total run time {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
