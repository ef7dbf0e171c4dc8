"""Connections to PostgreSQL: URLs, timeouts on every connection, databases made and dropped.

Connections are autocommit; code that needs a transaction opens one with
``with conn.transaction():``. Through a transaction pooler (PgBouncer refuses the `options`
parameter the timeouts travel in) a connection sets them in each transaction (tickq.db.pooled).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Concatenate, NamedTuple, ParamSpec, TypeVar

import psycopg
from psycopg import conninfo, sql
from psycopg.abc import Buffer
from psycopg.types.datetime import TimestamptzLoader

from tickq.db.errors import (
    CannotConnect,
    DatabaseRefused,
    DatabaseUnavailable,
    InvalidInput,
    NoAnswerInTime,
)

# ---------------------------------------------------------------- URLs and connections


def with_dbname(url: str, dbname: str) -> str:
    """The same server and credentials as ``url`` with another database.

    Works for URIs (also socket ones like ``postgresql://postgres:@/postgres?host=/tmp/x``) and
    for ``key=value`` strings; returns a ``key=value`` conninfo string.
    """
    return conninfo.make_conninfo(url, dbname=dbname)


def url_params(url: str) -> dict[str, str]:
    """The parts of a connection string (host, port, user, dbname, password...)."""
    return {k: str(v) for k, v in conninfo.conninfo_to_dict(url).items() if v is not None}


def split_password(url: str) -> tuple[str, str | None]:
    """``url`` without its password (as a ``key=value`` conninfo string) and the password; when
    it holds none (or an empty one), ``url`` as it was and None. Raises ValueError when libpq
    cannot read ``url``: callers outside this room need not know psycopg's exceptions."""
    try:
        params = conninfo.conninfo_to_dict(url)
    except psycopg.ProgrammingError as exc:
        raise ValueError(str(exc)) from None
    password = params.pop("password", None)
    if not password:
        return url, None
    return conninfo.make_conninfo("", **params), str(password)


def libpq_env(url: str) -> dict[str, str]:
    """PGHOST/PGPORT/PGUSER/PGDATABASE/PGPASSWORD for tools that take no URI (pg_prove)."""
    names = {
        "host": "PGHOST",
        "port": "PGPORT",
        "user": "PGUSER",
        "dbname": "PGDATABASE",
        "password": "PGPASSWORD",
        "sslmode": "PGSSLMODE",
    }
    params = url_params(url)
    return {env: params[key] for key, env in names.items() if params.get(key)}


class Timeouts(NamedTuple):
    """Limits on every connection, in seconds (the registry's db_* settings): nothing tickq does
    may wait on the database without bound."""

    connect: int = 10  # libpq's connect_timeout: a server that accepts and never answers
    statement: int = 60  # statement_timeout
    lock: int = 10  # lock_timeout: a lock another connection holds; and
    # idle_in_transaction_session_timeout: a session of ours silent inside a transaction (a host
    # cut off from the network mid-transaction) is ended by the server after as long, so the
    # locks it holds stop every other dispatcher no longer than a lock may (TCP alone would
    # take hours to notice).


DEFAULT_TIMEOUTS = Timeouts()


class _TimestamptzLoader(TimestamptzLoader):
    """timestamptz with PostgreSQL's infinities (a due time an operator set to 'infinity'):
    the latest and earliest datetimes Python has, instead of an error that ends the command."""

    def load(self, data: Buffer) -> datetime:
        if bytes(data) == b"infinity":
            return datetime.max.replace(tzinfo=UTC)
        if bytes(data) == b"-infinity":
            return datetime.min.replace(tzinfo=UTC)
        return super().load(data)


# The URLs a connection pooler answered (it refused the options parameter), in this process: a
# connection to one sets its timeouts in each transaction (tickq.db.pooled, imported only then).
POOLED_URLS: set[str] = set()
OPTIONS_REFUSED = "unsupported startup parameter: options"  # PgBouncer's refusal


def connect(
    url: str, autocommit: bool = True, timeouts: Timeouts = DEFAULT_TIMEOUTS
) -> psycopg.Connection:
    """A connection with `timeouts` set (they replace any the URL gives; other `options` of the
    URL are kept); through a connection pooler that refuses the options parameter, one that
    sets them in each transaction instead (tickq.db.pooled)."""
    if url in POOLED_URLS:
        conn: psycopg.Connection = _pooled(url, autocommit, timeouts)
    else:
        options = conninfo.conninfo_to_dict(url).get("options") or ""
        options = (f"{options} -c statement_timeout={timeouts.statement * 1000}"
                   f" -c lock_timeout={timeouts.lock * 1000}"
                   f" -c idle_in_transaction_session_timeout={timeouts.lock * 1000}").strip()
        try:
            conn = psycopg.connect(url, autocommit=autocommit, connect_timeout=timeouts.connect,
                                   options=options)
        except psycopg.OperationalError as exc:
            if OPTIONS_REFUSED not in str(exc):
                raise
            POOLED_URLS.add(url)
            conn = _pooled(url, autocommit, timeouts)
    conn.adapters.register_loader("timestamptz", _TimestamptzLoader)
    return conn


def _pooled(url: str, autocommit: bool, timeouts: Timeouts) -> psycopg.Connection:
    from tickq.db import pooled

    return pooled.connect(url, autocommit=autocommit, connect_timeout=timeouts.connect,
                          statement_s=timeouts.statement, lock_s=timeouts.lock)


def reach(url: str, timeouts: Timeouts = DEFAULT_TIMEOUTS) -> psycopg.Connection:
    """`connect`, each failure in one line: a string that is no connection string is
    InvalidInput (not quoted: it may hold a password), a server not reached CannotConnect."""
    try:
        return connect(url, timeouts=timeouts)
    except psycopg.ProgrammingError:
        raise InvalidInput("invalid --database-url / DATABASE_URL: not a PostgreSQL URL "
                           "(postgresql://user@host:port/dbname) or key=value string") from None
    except psycopg.OperationalError as exc:
        text = str(exc).strip()
        if "no password supplied" in text:
            raise CannotConnect(f"cannot reach the database: {_no_password(url)}") from None
        cause = text.splitlines()[0] if text else type(exc).__name__
        raise CannotConnect(f"cannot reach the database: {cause}") from None


def _no_password(url: str) -> str:
    """libpq's "no password supplied", with what it looked for and where (tickq.db.passfile)."""
    from tickq.db import passfile  # only when a login failed

    try:
        return passfile.explain(url)
    except Exception:  # an explanation must never hide the failure itself
        return "fe_sendauth: no password supplied"


def timeouts_of(settings: object) -> Timeouts:
    """The Timeouts of a registry's settings (tickq.registry.Settings)."""
    return Timeouts(
        connect=getattr(settings, "db_connect_timeout", DEFAULT_TIMEOUTS.connect),
        statement=getattr(settings, "db_statement_timeout", DEFAULT_TIMEOUTS.statement),
        lock=getattr(settings, "db_lock_timeout", DEFAULT_TIMEOUTS.lock),
    )


# ---------------------------------------------------------------- a link: one connection, kept

QUERY_CANCELED = "57014"  # statement_timeout
LOCK_NOT_AVAILABLE = "55P03"  # lock_timeout

P = ParamSpec("P")
T = TypeVar("T")


def first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


class Link:
    """One connection with `timeouts`, opened when first needed and opened again after it is
    lost: what a tick, a chain or an agent run holds instead of a psycopg connection.

    `call` runs one function of tickq.db.api on it and turns psycopg's errors into tickq's
    (tickq.db.errors): a lost connection is DatabaseUnavailable, a db_* timeout NoAnswerInTime,
    anything else the server says DatabaseRefused. `retrying` is the one reconnect loop: a
    bounded number of attempts, each delay twice the one before (at most 10 s)."""

    def __init__(
        self, url: str, timeouts: Timeouts | None = None, *, attempts: int = 8,
        delay: float = 0.5, on_retry: Callable[[str, int, Exception], None] | None = None,
    ) -> None:
        self.url = url
        self.timeouts = timeouts or DEFAULT_TIMEOUTS
        self.attempts = attempts
        self.delay = delay
        self.on_retry = on_retry
        self._conn: psycopg.Connection | None = None

    def connection(self) -> psycopg.Connection:
        """The open connection (opened now if there is none); DatabaseUnavailable if it
        cannot be."""
        if self._conn is None or self._conn.closed or self._conn.broken:
            self._conn = reach(self.url, self.timeouts)
        return self._conn

    def call(
        self, fn: Callable[Concatenate[psycopg.Connection, P], T], *args: P.args,
        **kwargs: P.kwargs,
    ) -> T:
        """`fn(connection, *args, **kwargs)`, its psycopg errors turned into tickq's."""
        conn = self.connection()
        try:
            return fn(conn, *args, **kwargs)
        except psycopg.Error as exc:
            raise self._translated(exc) from exc

    def retrying(
        self, what: str, fn: Callable[Concatenate[psycopg.Connection, P], T], *args: P.args,
        **kwargs: P.kwargs,
    ) -> T:
        """`call`, again on a fresh connection each time the connection is lost or a timeout
        fires, up to `attempts` times in all; the last failure is raised."""
        delay = self.delay
        for attempt in range(1, self.attempts + 1):
            try:
                return self.call(fn, *args, **kwargs)
            except DatabaseUnavailable as exc:
                if attempt == self.attempts:
                    raise
                if self.on_retry is not None:
                    self.on_retry(what, attempt, exc)
                time.sleep(delay)
                delay = min(delay * 2, 10.0)
        raise AssertionError("unreachable")

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        """A transaction (a savepoint inside another) around the calls of the block; a commit
        lost with the connection is DatabaseUnavailable."""
        try:
            with self.connection().transaction():
                yield
        except psycopg.Error as exc:
            raise self._translated(exc) from exc

    def retime(self, timeouts: Timeouts) -> None:
        """From now on `timeouts`: on the open connection at once, on any later one when it is
        opened (a connection's connect timeout only matters while it is being opened)."""
        unchanged = timeouts == self.timeouts
        self.timeouts = timeouts
        if unchanged:
            return  # the connection has them already: no round trip
        if getattr(self._conn, "pooled", False):  # set in each transaction: tickq.db.pooled
            self._conn.retime(timeouts.statement, timeouts.lock)  # type: ignore[union-attr]
            return
        if self._conn is not None and not self._conn.closed and not self._conn.broken:
            try:
                self._conn.execute(
                    "SELECT set_config('statement_timeout', %s, false),"
                    " set_config('lock_timeout', %s, false)",
                    (f"{timeouts.statement}s", f"{timeouts.lock}s"))
            except psycopg.Error as exc:
                raise self._translated(exc) from exc

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()

    def __enter__(self) -> Link:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _translated(self, exc: psycopg.Error) -> Exception:
        if exc.sqlstate in (QUERY_CANCELED, LOCK_NOT_AVAILABLE):
            return NoAnswerInTime(f"no answer in time: {first_line(exc)}")
        conn = self._conn
        if conn is None or conn.broken or conn.closed:
            return DatabaseUnavailable(str(exc).strip())
        return DatabaseRefused(exc.sqlstate, exc.diag.message_primary or first_line(exc),
                               str(exc).strip())


def create_database(server_url: str, name: str, template: str | None = None) -> str:
    """Create database ``name`` (a copy of ``template`` if given); return its URL."""
    query = sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name))
    if template:
        query += sql.SQL(" TEMPLATE {}").format(sql.Identifier(template))
    with connect(server_url) as admin:
        admin.execute(query)
    return with_dbname(server_url, name)


def drop_database(server_url: str, name: str) -> None:
    """Drop database ``name`` if it exists, ending its sessions."""
    query = sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
    with connect(server_url) as admin:
        admin.execute(query)
