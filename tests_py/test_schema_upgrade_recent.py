"""A queue made by a recent tickq, migrated with today's sql/, is the queue a fresh migration
makes: the same tables, columns, constraints, indexes, triggers, views, types and functions
(each signature, body, comment, settings and grants), and its rows are kept.
test_schema_upgrade.py walks from the first commits' sql/ instead.

The earlier queues are pg_dumps in tests_py/data/schema/ (gzipped: data, not source), each after a
sync, an agent and a claim: tickq_main_0085, of a database the migration chain up to 0085 made
(without 0070-0073, which merged later), with the API files of that time (which took a p_now in
every function); and tickq_main_0090, the same queue migrated with the whole chain 0001..0090
that sql/migrations/0100_baseline.sql replaced (git commit 412a04b). Each is recorded as at the
baseline without running it. A migration that forgets to drop an old signature
leaves a function a fresh queue does not have (and a call without the dropped parameter
ambiguous); one that rewrites a table differently from the chain leaves a column or a constraint
apart. Either fails here, named.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import psycopg
import pytest

from tickq import db

DUMPS = [Path(__file__).parent / "data" / "schema" / f"tickq_main_{version}.sql.gz"
         for version in ("0085", "0090")]

# What a queue is made of, one row per object, as text a difference can name.
CATALOG = {
    "columns": """
        SELECT c.relname || '.' || a.attname, format_type(a.atttypid, a.atttypmod),
            a.attnotnull::text, coalesce(pg_get_expr(d.adbin, d.adrelid), '')
        FROM pg_attribute AS a
        INNER JOIN pg_class AS c ON a.attrelid = c.oid
        LEFT JOIN pg_attrdef AS d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
        WHERE c.relnamespace = 'tickq'::regnamespace AND c.relkind IN ('r', 'v', 'c')
            AND a.attnum > 0 AND NOT a.attisdropped""",
    "constraints": """
        SELECT coalesce(r.relname, t.typname) || '.' || k.conname, pg_get_constraintdef(k.oid)
        FROM pg_constraint AS k
        LEFT JOIN pg_class AS r ON k.conrelid = r.oid
        LEFT JOIN pg_type AS t ON k.contypid = t.oid
        WHERE k.connamespace = 'tickq'::regnamespace""",
    "indexes": """
        SELECT i.indexrelid::regclass::text, pg_get_indexdef(i.indexrelid)
        FROM pg_index AS i INNER JOIN pg_class AS c ON i.indrelid = c.oid
        WHERE c.relnamespace = 'tickq'::regnamespace""",
    "triggers": """
        SELECT t.tgrelid::regclass::text || '.' || t.tgname, pg_get_triggerdef(t.oid)
        FROM pg_trigger AS t INNER JOIN pg_class AS c ON t.tgrelid = c.oid
        WHERE c.relnamespace = 'tickq'::regnamespace AND NOT t.tgisinternal""",
    "views": """
        SELECT c.relname, pg_get_viewdef(c.oid) FROM pg_class AS c
        WHERE c.relnamespace = 'tickq'::regnamespace AND c.relkind = 'v'""",
    "types": """
        SELECT t.typname, t.typtype::text, format_type(t.typbasetype, t.typtypmod),
            coalesce((SELECT string_agg(e.enumlabel, ',' ORDER BY e.enumsortorder)
                FROM pg_enum AS e WHERE e.enumtypid = t.oid), '')
        FROM pg_type AS t
        WHERE t.typnamespace = 'tickq'::regnamespace AND t.typtype IN ('d', 'e', 'c')""",
    "functions": """
        SELECT p.oid::regprocedure::text, pg_get_function_result(p.oid), md5(p.prosrc),
            p.provolatile::text, p.prosecdef::text, coalesce(array_to_string(p.proconfig, ','), ''),
            coalesce(obj_description(p.oid, 'pg_proc'), ''), coalesce(p.proacl::text, '')
        FROM pg_proc AS p WHERE p.pronamespace = 'tickq'::regnamespace""",
}


def catalog(url: str) -> dict[str, set[tuple[str, ...]]]:
    with db.connect(url) as conn:
        return {part: set(conn.execute(query).fetchall()) for part, query in CATALOG.items()}


def restore_earlier_queue(url: str, dump: Path) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(gzip.decompress(dump.read_bytes()).decode())  # one query, many statements


@pytest.mark.parametrize("dump", DUMPS, ids=lambda p: p.name.split(".")[0])
def test_an_earlier_queue_migrated_today_is_a_fresh_one(
    empty_db_url: str, db_url: str, dump: Path
) -> None:
    restore_earlier_queue(empty_db_url, dump)
    with db.connect(empty_db_url) as conn:
        applied = db.migrate(conn)
        assert any("0100_baseline.sql recorded" in step for step in applied), applied
        assert not any(step == "migration 0100_baseline.sql" for step in applied), applied
        migrations = conn.execute("SELECT name FROM tickq.migration ORDER BY version").fetchall()
    # The baseline recorded, then every migration shipped after it run.
    assert migrations == [(m.name,) for m in db.migration_files()]
    upgraded, fresh = catalog(empty_db_url), catalog(db_url)
    for part in CATALOG:
        only_upgraded = sorted(row[:2] for row in upgraded[part] - fresh[part])
        only_fresh = sorted(row[:2] for row in fresh[part] - upgraded[part])
        assert (only_upgraded, only_fresh) == ([], []), part


KINDS = "SELECT name, due_at, run_id FROM tickq.job_kind ORDER BY 1"


@pytest.mark.parametrize("dump", DUMPS, ids=lambda p: p.name.split(".")[0])
def test_the_earlier_queue_keeps_its_rows(empty_db_url: str, dump: Path) -> None:
    restore_earlier_queue(empty_db_url, dump)
    with db.connect(empty_db_url) as conn:
        before = conn.execute(KINDS).fetchall()
        db.migrate(conn)
        after = conn.execute(KINDS).fetchall()
    assert after == before and len(after) >= 4
    assert any(run_id is not None for _, _, run_id in after), "the claim's lease is kept"


# The live runs of the dump's claim, each with the run its slot row names (job_run.slot_row,
# named slot before migration 0120: the same values, under a name apart from job_run.slots).
HELD = """SELECT r.id, r.dispatcher,
        (SELECT sl.run_id FROM tickq.slot AS sl WHERE sl.n = r.slot_row)
    FROM tickq.job_run AS r WHERE r.outcome = 'running' ORDER BY r.id"""
BUSY = "SELECT count(*) FROM tickq.slot WHERE run_id IS NOT NULL"


@pytest.mark.parametrize("dump", DUMPS, ids=lambda p: p.name.split(".")[0])
def test_runs_claimed_before_the_upgrade_free_their_slot_rows_when_reported(
    empty_db_url: str, dump: Path
) -> None:
    restore_earlier_queue(empty_db_url, dump)
    with db.connect(empty_db_url) as conn:
        db.migrate(conn)
        held = conn.execute(HELD).fetchall()
        assert held and all(holder == run_id for run_id, _, holder in held), held
        for run_id, dispatcher, _ in held:
            conn.execute("SELECT tickq.report_run(%s, %s, 'ok')", (run_id, dispatcher))
        assert conn.execute(BUSY).fetchone() == (0,), "the reports freed them"
