"""A command's conversation with the queue: the URL it names, a connection with the registry's
timeouts, the schema migrated; each failure as the exception the exit map knows."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import psycopg
from psycopg.rows import dict_row

from tickq import db
from tickq.db.connect import reach
from tickq.db.errors import DatabaseUnreachable, ScratchUnavailable, translated

Connection = psycopg.Connection
Row = dict[str, Any]


def url(given: str | None, registry: str | None = None) -> str:
    """`given`, else DATABASE_URL, else the embedded server's database of `registry`'s folder
    (the server started now)."""
    try:
        return db.resolve_url(given, registry)
    except Exception as exc:  # the embedded server failed to start: its own error types
        raise DatabaseUnreachable(f"cannot start the embedded PostgreSQL: {exc}") from None


def server(given: str | None, timeouts: db.Timeouts = db.DEFAULT_TIMEOUTS) -> str:
    """A server to create scratch databases on: `given`'s, else the embedded one; checked to
    answer."""
    found = given or os.environ.get("DATABASE_URL")
    if not found:
        try:
            from tickq.db import embedded

            found = embedded.ensure_server()
        except Exception as exc:
            raise DatabaseUnreachable(f"cannot start the embedded PostgreSQL: {exc}") from None
    connect(found, timeouts).close()
    return found


SCRATCH_URL = "TICKQ_SCRATCH_URL"


def scratch_server() -> str:
    """Where `check` and `simulate` make their scratch databases: the server TICKQ_SCRATCH_URL
    names, else the embedded PostgreSQL (started now). Never the queue's own server: a check
    only reads the queue, needs no right to create databases there, and leaves nothing on it."""
    found = os.environ.get(SCRATCH_URL)
    if found:
        return found
    try:
        from tickq.db import embedded

        return embedded.ensure_server()
    except Exception as exc:
        raise ScratchUnavailable(
            f"the embedded PostgreSQL did not start ({exc}); or name a server where tickq may "
            f"create databases in {SCRATCH_URL}") from None


def connect(target: str, timeouts: db.Timeouts = db.DEFAULT_TIMEOUTS) -> Connection:
    """A connection with `timeouts` (the registry's: db.timeouts_of), not migrated; its
    failures in one line (tickq.db.connect.reach)."""
    return reach(target, timeouts)


def open_queue(target: str, timeouts: db.Timeouts = db.DEFAULT_TIMEOUTS) -> Connection:
    """A connection to the queue at `target`, its schema migrated."""
    conn = connect(target, timeouts)
    try:
        db.migrate(conn)
    except BaseException:
        conn.close()
        raise
    return conn


def migrate(conn: Connection) -> list[str]:
    """Apply what the schema lacks; the names of the files applied."""
    return db.migrate(conn)


def rows(conn: Connection, query: str, params: Mapping[str, Any] | None = None) -> list[Row]:
    """Every row of named query `query` (db/queries), each a dict by column name; a refusal of
    sql/api raised as the class callers branch on (db.errors.translated)."""
    try:
        with conn.cursor(row_factory=dict_row) as cur:
            return cur.execute(db.load_query(query), params or {}).fetchall()
    except psycopg.Error as exc:
        found = translated(exc)
        if found is exc:
            raise
        raise found from exc


def one(conn: Connection, query: str, params: Mapping[str, Any] | None = None) -> Row | None:
    """The first row of named query `query`, or None."""
    found = rows(conn, query, params)
    return found[0] if found else None
