"""What the scratch pool's tests read a database with: its tickq rows as text, its name, its
owner, the pool's marks (database comments), and what a fresh copy of the template holds."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import psycopg

from tickq.db import Timeouts, scratch
from tickq.db.connect import with_dbname

REPO = Path(__file__).resolve().parent.parent
REAL_FIX = REPO / "examples" / "starvation" / "real_fix.toml"
TIMEOUTS = Timeouts(statement=600)


def contents(conn: psycopg.Connection) -> dict[str, str]:
    """Every tickq table's rows (sorted) and every sequence's position, as text."""
    out = {}
    for rel, kind in conn.execute(
            "SELECT 'tickq.' || quote_ident(c.relname), c.relkind FROM pg_class AS c"
            " WHERE c.relnamespace = 'tickq'::regnamespace AND c.relkind IN ('r', 'S')"
            " ORDER BY 1").fetchall():
        query = (f"SELECT last_value::text || ' ' || is_called::text FROM {rel}" if kind == "S"
                 else f"SELECT coalesce(jsonb_agg(r ORDER BY r::text), '[]')::text"
                      f" FROM (SELECT to_jsonb(t) AS r FROM {rel} AS t) AS q")
        row = conn.execute(query).fetchone()
        assert row is not None
        out[rel] = row[0]
    return out


def database_of(conn: psycopg.Connection) -> str:
    row = conn.execute("SELECT current_database()").fetchone()
    assert row is not None
    return str(row[0])


@contextlib.contextmanager
def admin_of(pg_server_url: str) -> Iterator[psycopg.Connection]:
    with psycopg.connect(pg_server_url, autocommit=True) as admin:
        yield admin


def role_of(admin: psycopg.Connection) -> str:
    row = admin.execute("SELECT current_user").fetchone()
    assert row is not None
    return str(row[0])


def comments(admin: psycopg.Connection) -> dict[str, str]:
    return dict(admin.execute(
        "SELECT datname, shobj_description(oid, 'pg_database') FROM pg_database"
        " WHERE datname LIKE 'tickq_scratch_pool%'").fetchall())


def fresh_contents(admin: psycopg.Connection, pg_server_url: str, beside: str) -> dict[str, str]:
    """`contents` of a fresh copy of the template (named after pool database `beside`)."""
    fresh = f"tickq_test_fresh_{beside[-12:]}"
    template = scratch.template_name(role_of(admin))
    admin.execute(f'DROP DATABASE IF EXISTS "{fresh}"')
    admin.execute(f'CREATE DATABASE "{fresh}" TEMPLATE "{template}"')
    try:
        with psycopg.connect(with_dbname(pg_server_url, fresh)) as copy:
            return contents(copy)
    finally:
        admin.execute(f'DROP DATABASE IF EXISTS "{fresh}"')


def as_if_none_was_put_back(pg_server_url: str) -> None:
    """Mark every pool database as in use by the last check, so the next is taken in order
    (a database an earlier test's check put back would be taken first)."""
    with admin_of(pg_server_url) as admin:
        for name, mark in comments(admin).items():
            if mark == scratch.CLEAN_MARK:
                admin.execute(f"""COMMENT ON DATABASE "{name}" IS '{scratch.POOL_MARK}'""")
