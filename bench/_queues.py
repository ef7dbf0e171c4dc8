"""Loaders for the bench scripts: a queue of N kinds with a due shape, weights and pools, a run
history. Not a benchmark itself; the scripts import it as ``_queues`` beside ``_common``.
"""

from __future__ import annotations

import psycopg
from psycopg import sql

# Due shapes: what due_at a kind gets, as SQL expressions of its number i (1-based).
#   all:  every kind due, spread over the last 30 minutes (half of them past stale_after=15m)
#   pct1: every 100th group of four consecutive kinds (one per lane) due like "all", the rest
#         due tomorrow or later: exactly 1% due, spread evenly over the four lanes
#   none: every kind due tomorrow or later (an empty poll)
DUE_PAST = "now() - make_interval(secs => ({i}::bigint * 7919) % 1800)"
DUE_FUTURE = "now() + interval '1 day' + make_interval(secs => ({i}::bigint * 7919) % 86400)"
PCT1_DUE = "({i}::bigint / 4) % 100 = 0"
DUE_SHAPES = {
    "all": DUE_PAST.format(i="i"),
    "pct1": f"CASE WHEN {PCT1_DUE.format(i='i')} THEN {DUE_PAST.format(i='i')}"
    f" ELSE {DUE_FUTURE.format(i='i')} END",
    "none": DUE_FUTURE.format(i="i"),
}


def make_pct1_due(conn: psycopg.Connection) -> None:
    """Turn a table loaded with shape "none" into shape "pct1" (updates 1% of the rows only)."""
    i = "substr(k.name, 2)::bigint"
    conn.execute(
        sql.SQL("UPDATE tickq.job_kind AS k SET due_at = {due} WHERE {where}").format(
            due=sql.SQL(DUE_PAST.format(i=i)),  # type: ignore[arg-type]
            where=sql.SQL(PCT1_DUE.format(i=i)),  # type: ignore[arg-type]
        )
    )
    vacuum_analyze(conn)


def load_kinds(
    conn: psycopg.Connection,
    count: int,
    due_sql: str,
    every: str = "5 minutes",
    slots: int = 100,
) -> None:
    """Replace every kind (and all runs) with ``count`` kinds in one INSERT ... SELECT.

    ``due_sql`` is an SQL expression of ``i`` (1..count). Priorities cycle over the four lanes;
    every kind has timeout 1 minute, below the default lease of 5 minutes.

    To keep a million-row load to seconds, the secondary indexes of job_kind are dropped for the
    insert and re-created afterwards from their own definitions (pg_get_indexdef), so the schema
    the bench runs on is the migrated one. The deferred lease_covers_timeouts trigger (one check
    per row at commit) is disabled for the insert only: the lease (5 minutes) is checked below to
    cover the one timeout used (1 minute). The kind_valid trigger (checks the registry columns of
    each row written, its time zone included) is disabled for the insert too: every loaded kind
    has a valid name, a positive cadence and timeout, and UTC. CHECK and foreign key constraints
    stay on. settings.slots is set to ``slots`` and tickq.slot holds that many free
    slot rows.
    """
    with conn.transaction():
        conn.execute(
            "TRUNCATE tickq.job_kind, tickq.job_run CASCADE"
        )  # and any table referencing them
        indexes = conn.execute(
            """
            SELECT c.relname, pg_get_indexdef(i.indexrelid)
            FROM pg_index AS i
            INNER JOIN pg_class AS c ON c.oid = i.indexrelid
            WHERE i.indrelid = 'tickq.job_kind'::regclass AND NOT i.indisprimary
            ORDER BY c.relname
            """
        ).fetchall()
        for name, _definition in indexes:
            conn.execute(sql.SQL("DROP INDEX tickq.{}").format(sql.Identifier(name)))
        # lease_covers_timeouts and kind_valid (timezone_known before migration 0007), so a
        # sql/ folder of an earlier commit loads too (claim_instructions.py --sql-dir)
        conn.execute("ALTER TABLE tickq.job_kind DISABLE TRIGGER USER")
        conn.execute(
            sql.SQL(
                """
                INSERT INTO tickq.job_kind (name, every, timeout, priority, due_at)
                SELECT 'k' || lpad(i::text, 7, '0'), {every}::interval, interval '1 minute',
                       ((ARRAY['urgent', 'high', 'normal', 'low'])[1 + i % 4])::tickq.priority,
                       {due}
                FROM generate_series(1, {count}) AS i
                """
            ).format(
                every=sql.Literal(every),
                due=sql.SQL(due_sql),  # type: ignore[arg-type]
                count=sql.Literal(count),
            )
        )
        conn.execute("ALTER TABLE tickq.job_kind ENABLE TRIGGER USER")
        for _name, definition in indexes:
            conn.execute(definition)
        # The slot limit is held by rows (tickq.slot, one per slot), kept by sync_registry: set
        # the limit and make exactly that many free slot rows (TRUNCATE of job_run does not
        # reach them, and a slot still naming a run from the last load would never be free).
        conn.execute("UPDATE tickq.settings SET slots = %s", (slots,))
        conn.execute("DELETE FROM tickq.slot")
        conn.execute(
            "INSERT INTO tickq.slot (n) SELECT g.n FROM generate_series(1, %s) AS g (n)", (slots,)
        )
        lease, timeout = conn.execute(
            "SELECT s.lease, (SELECT max(timeout) FROM tickq.job_kind) FROM tickq.settings AS s"
        ).fetchone()  # type: ignore[misc]
        if timeout is not None and lease < timeout:
            raise RuntimeError(f"lease {lease} is shorter than timeout {timeout}")
    vacuum_analyze(conn)


def weigh_kinds(conn: psycopg.Connection, on: bool) -> None:
    """Weights and pools present (``on``): three pools (slots 1, 2, 3), every tenth kind of
    weight 2 or 3 naming one of them, and so are the two kinds due first, so that a claim of
    anything due always takes tickq.claim_fit's path (its dearest); or none again."""
    with conn.transaction():
        if on:
            conn.execute("INSERT INTO tickq.pool (name, slots)"
                         " VALUES ('p0', 1), ('p1', 2), ('p2', 3)")
            conn.execute("INSERT INTO tickq.pool_slot (pool, n) SELECT p.name, g.n FROM tickq.pool"
                         " AS p CROSS JOIN LATERAL generate_series(1, p.slots) AS g (n)")
            conn.execute("UPDATE tickq.job_kind SET weight = 2 + substr(name, 2)::bigint % 2,"
                         " pools = ARRAY['p' || substr(name, 2)::bigint % 3]"
                         " WHERE substr(name, 2)::bigint % 10 = 0 OR name IN (SELECT k.name FROM"
                         " tickq.job_kind AS k ORDER BY k.due_at, k.name LIMIT 2)")
        else:
            conn.execute("UPDATE tickq.job_kind SET weight = 1, pools = '{}'"
                         " WHERE weight > 1 OR pools <> '{}'")
            conn.execute("DELETE FROM tickq.pool")
    vacuum_analyze(conn)


# What tickq.run_count holds for the runs in job_run (as migration 0072 fills it): the loader
# inserts with its row trigger off (a million rows one at a time through it would take minutes)
# and counts them in one statement afterwards.
RUN_COUNT_FROM_HISTORY = """
    INSERT INTO tickq.run_count (kind, runs, merged_slots, timed_runs, seconds, buckets, last_ok)
    SELECT r.kind,
           array(SELECT count(*) FILTER (WHERE x = o)
                 FROM unnest(enum_range(NULL::tickq.outcome)) WITH ORDINALITY AS e (o, n),
                      unnest(array_agg(r.outcome)) AS x
                 GROUP BY e.n ORDER BY e.n),
           sum(greatest(r.slots - 1, 0)), count(r.duration),
           coalesce(sum(extract(EPOCH FROM r.duration)), 0),
           array(SELECT count(*) FILTER (WHERE extract(EPOCH FROM d) <= b)
                 FROM unnest(array_agg(r.duration)) AS d,
                      unnest(tickq.metrics_buckets()) WITH ORDINALITY AS t (b, n)
                 GROUP BY t.n ORDER BY t.n),
           max(r.finished_at) FILTER (WHERE r.outcome = 'ok')
    FROM tickq.job_run AS r WHERE r.outcome <> 'running' GROUP BY r.kind
"""


def load_history(conn: psycopg.Connection, kinds: int, runs: int, clock: str = "now()") -> None:
    """``runs`` finished runs spread evenly over kinds k0000001..``kinds`` (every tenth failed),
    the newest finished at ``clock`` (an SQL expression); job_kind.last_run_id set as
    finish_run keeps it, and tickq.run_count as its trigger keeps it (when the schema has it)."""
    counted = conn.execute("SELECT to_regclass('tickq.run_count') IS NOT NULL").fetchone()
    if counted and counted[0]:
        conn.execute("ALTER TABLE tickq.job_run DISABLE TRIGGER run_counted_insert")
    conn.execute(
        f"""
        INSERT INTO tickq.job_run (
            kind, attempt, run_trigger, slots, dispatcher, claimed_at, started_at, finished_at,
            outcome, exit_code, output_tail, duration
        )
        SELECT 'k' || lpad((1 + i % {kinds})::text, 7, '0'), 1, 'schedule', 1, 'bench',
               x.finished - x.took, x.finished - x.took, x.finished,
               CASE WHEN i % 10 = 0 THEN 'failed' ELSE 'ok' END::tickq.outcome,
               CASE WHEN i % 10 = 0 THEN 1 ELSE 0 END, 'done', x.took
        FROM generate_series(1, {runs}) AS i
        CROSS JOIN LATERAL (
            SELECT {clock} - make_interval(secs => ({runs} - i) * 2.5) AS finished,
                   make_interval(secs => (i::bigint * 7919) % 60) AS took
        ) AS x
        """  # type: ignore[arg-type]
    )
    # What tickq.finish_run keeps for each kind as its runs are reported.
    conn.execute(
        """
        UPDATE tickq.job_kind AS k SET last_run_id = l.id
        FROM (SELECT DISTINCT ON (kind) kind, id FROM tickq.job_run
              ORDER BY kind, finished_at DESC) AS l
        WHERE l.kind = k.name
        """
    )
    if counted and counted[0]:
        conn.execute("ALTER TABLE tickq.job_run ENABLE TRIGGER run_counted_insert")
        conn.execute("DELETE FROM tickq.run_count")
        conn.execute(RUN_COUNT_FROM_HISTORY)
    vacuum_analyze(conn)


def vacuum_analyze(conn: psycopg.Connection) -> None:
    for name in ("job_kind", "job_run", "settings", "slot", "pool", "pool_slot"):
        row = conn.execute("SELECT to_regclass(%s)", (f"tickq.{name}",)).fetchone()
        if row and row[0]:  # the pools' tables exist from migration 0033 on (--sql-dir)
            conn.execute(sql.SQL("VACUUM ANALYZE tickq.{}").format(sql.Identifier(name)))
