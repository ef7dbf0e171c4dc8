"""Connections through a transaction pooler (PgBouncer with `pool_mode = transaction`, Neon's
pooled endpoint, Supabase's port 6543): nothing of a session is relied on.

A transaction pooler hands each transaction to whichever server connection is free, so what a
session sets (`SET`, `set_config(..., false)`), the advisory locks it holds, what it prepares or
listens to may belong to another client by the next transaction; and PgBouncer refuses the
`options` startup parameter that carries tickq's timeouts on a direct connection (in every pool
mode, unless told to ignore it). On that refusal tickq connects again without it, and from then
on in this process every connection to that URL is a `PooledConnection` (tickq.db.connect):

- every transaction starts by setting the statement and lock timeouts for itself alone
  (`set_config(..., true)`): a statement sent on its own goes as `BEGIN` with the timeouts (one
  round trip), the statement, `COMMIT`; a transaction a caller opens runs them first;
- no statement is prepared on the server (`prepare_threshold=None`).

A session pool works the same way. The migrator holds only transaction-level locks
(tickq.db.migrator); the scratch databases of a check refuse a pooler (tickq.db.scratch).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import psycopg
from psycopg.pq import TransactionStatus


def local_timeouts(statement_s: int, lock_s: int) -> str:
    """The statement that sets the timeouts for the rest of the transaction it runs in."""
    return (f"SELECT set_config('statement_timeout', '{int(statement_s) * 1000}', true),"
            f" set_config('lock_timeout', '{int(lock_s) * 1000}', true),"
            f" set_config('idle_in_transaction_session_timeout', '{int(lock_s) * 1000}', true)")


class PooledCursor(psycopg.Cursor[Any]):
    """A cursor whose statement, sent outside a transaction, gets one of its own with the
    connection's timeouts."""

    def execute(self, query: Any, params: Any = None, *, prepare: bool | None = None,
                binary: bool | None = None) -> PooledCursor:
        conn = self.connection
        if conn.info.transaction_status != TransactionStatus.IDLE:
            super().execute(query, params, prepare=prepare, binary=binary)
            return self
        assert isinstance(conn, PooledConnection)
        if not conn.autocommit:  # after the BEGIN psycopg sends; the caller commits
            super().execute(conn.timeouts_statement)
            super().execute(query, params, prepare=prepare, binary=binary)
            return self
        super().execute(f"BEGIN; {conn.timeouts_statement}")  # no parameters: one round trip
        try:
            super().execute(query, params, prepare=prepare, binary=binary)
        except BaseException:
            if not conn.broken and not conn.closed:
                conn.rollback()
            raise
        conn.commit()
        return self


class PooledConnection(psycopg.Connection[Any]):
    """A connection through a transaction pooler: its timeouts are set in each transaction."""

    pooled = True
    timeouts_statement = local_timeouts(60, 10)

    def retime(self, statement_s: int, lock_s: int) -> None:
        """The timeouts every later transaction sets (no round trip)."""
        self.timeouts_statement = local_timeouts(statement_s, lock_s)

    @contextlib.contextmanager
    def transaction(self, savepoint_name: str | None = None,
                    force_rollback: bool = False) -> Iterator[Any]:
        outer = self.info.transaction_status == TransactionStatus.IDLE
        with super().transaction(savepoint_name, force_rollback) as tx:
            if outer:
                super().execute(self.timeouts_statement)
            yield tx


def connect(url: str, *, autocommit: bool, connect_timeout: int, statement_s: int,
            lock_s: int) -> PooledConnection:
    """A connection through the pooler at `url`: no options parameter, nothing prepared."""
    conn = PooledConnection.connect(
        url, autocommit=autocommit, connect_timeout=connect_timeout, options="",
        prepare_threshold=None, cursor_factory=PooledCursor)
    conn.retime(statement_s, lock_s)
    return conn


def is_pooled(conn: psycopg.Connection) -> bool:
    return isinstance(conn, PooledConnection)
