"""Scratch databases for the simulator (`tickq check`, `tickq simulate`): copies
(`CREATE DATABASE ... TEMPLATE`) of a migrated template that stays on the server while the schema
is unchanged, so a check copies a database instead of migrating one; and the copies themselves
kept for the next check (the pool), so a check usually neither copies nor drops one.

The template is named after the schema's checksum (every migration and API file) and its owner:
`tickq_scratch_template_<checksum>_<role>`, and carries the comment `tickq scratch template`, so
it is never taken for a user's database, nor a user's database for it. It is built under a name
of its own and renamed only once migrated, so no copy is ever taken of a half-built one; two
checks that build it at once keep the first. Its functions run as their caller, who owns them,
and job_run has no foreign key (queries/scratch_lean.sql); the tables the simulation writes are
unlogged in it (queries/scratch_unlogged.sql), and so in every copy; it keeps its own rows and
sequence positions in tickq.scratch_seed (queries/scratch_seed.sql).

The pool: up to POOL_SIZE copies per schema and role, `tickq_scratch_pool_<checksum>_<role>_<n>`
with the comment `tickq scratch pool`. A check takes the first one no other check holds (an
advisory lock inside it, held while its connection is open, so a check that dies lets go of
it), making it from the template the first time, and puts it back to the template's state
before it simulates (queries/scratch_reset.sql: about 20 ms, where a copy took 60-150 ms and its
DROP 30-60 ms and a checkpoint of the whole server); one that cannot be put back (its tables
changed by hand) is dropped, and made again by a later check. A check that is done with a
pool database while it still simulates in another puts that one back then (`put_back`), on a
core the other leaves free, and marks it (`tickq scratch pool, put back`, until a check takes it
again): the next check takes such a one first, and its put-back finds nothing to empty. When
every one is held, it simulates in a copy of its own, dropped afterwards. Templates and pools
of this role with another checksum (an older tickq's) are dropped by the next check.
"""

from __future__ import annotations

import contextlib
import functools
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from hashlib import sha256

import psycopg
from psycopg import Connection, sql

from tickq.db import pooled
from tickq.db.connect import Timeouts, connect, drop_database, with_dbname
from tickq.db.errors import ScratchUnavailable
from tickq.db.migrator import api_files, load_query, migrate, migration_files

PREFIX = "tickq_scratch_template_"
MARK = "tickq scratch template"
POOL_PREFIX = "tickq_scratch_pool_"
POOL_MARK = "tickq scratch pool"
# A pool database put back when its check was done with it (`put_back`), while that check still
# simulated in another: the next check takes it first, and its own put-back finds nothing to do.
CLEAN_MARK = "tickq scratch pool, put back"
# Checks beside each other take one pool database each, a check as many as the machine has
# cores; past this many, a check copies a database of its own and drops it.
POOL_SIZE = 8
POOL_LOCK = 0x7469636B  # the advisory lock a check holds in the pool database it uses
# The scratch session's settings, one round trip. Nothing in a scratch database outlives it, so
# its commits need not wait for the disk. The simulation runs the same few statements thousands
# of times on tables of a few rows: with custom plans (the default for a statement with
# parameters) many of them are planned again on every call, about a tenth of a simulation's
# time; their generic plans give the same rows (every query the simulation's outcome depends on
# orders by a unique key) in a fifth less backend CPU time (bench/README.md). The search_path
# is the one the queue's functions pin, which the template's do not (queries/scratch_lean.sql).
# And the session is the simulator's (tickq.simulation_session): each cron string is parsed once,
# for the sync and the windows' planning as for the simulation (bench/README.md).
SESSION_SETTINGS = ("SELECT set_config('synchronous_commit', 'off', false),"
                    " set_config('plan_cache_mode', 'force_generic_plan', false),"
                    " set_config('search_path', 'pg_catalog, tickq, pg_temp', false),"
                    " tickq.simulation_session()")
COPY_TRIES = 5  # a template another check is still building or renaming is in use for a moment


@functools.cache
def schema_checksum() -> str:
    """12 hex digits of sha256 over every migration (name and text) and API file shipped, and
    what the template's build does after them and how a used copy is put back
    (queries/scratch_lean.sql, scratch_unlogged.sql, scratch_seed.sql, scratch_reset.sql)."""
    digest = sha256()
    for m in migration_files():
        digest.update(f"{m.name}\0{m.text}\0".encode())
    for name, text in api_files():
        digest.update(f"{name}\0{text}\0".encode())
    for query in ("scratch_lean", "scratch_unlogged", "scratch_seed", "scratch_reset"):
        digest.update(load_query(query).encode())
    return digest.hexdigest()[:12]


def template_name(role: str) -> str:
    """The template of this schema for databases `role` creates (it must own what it copies)."""
    return f"{PREFIX}{_of_schema_and_role(role)}"


def pool_name(role: str, n: int) -> str:
    """Pool database `n` (0, 1, ...) of this schema for `role`."""
    return f"{POOL_PREFIX}{_of_schema_and_role(role)}_{n}"


def _of_schema_and_role(role: str) -> str:
    return f"{schema_checksum()}_{sha256(role.encode()).hexdigest()[:8]}"


@contextmanager
def scratch(server_url: str, timeouts: Timeouts) -> Iterator[Connection]:
    """An autocommit connection to a scratch database in the template's state: a pool database
    held while the connection is open, else a copy of its own, dropped afterwards. Commits
    need not wait for the disk: nothing in a scratch database outlives its check. Every
    statement runs its generic plan (SESSION_SETTINGS)."""
    try:
        with connect(server_url) as admin:
            if pooled.is_pooled(admin):  # _hold's advisory lock is a session's
                raise ScratchUnavailable("the scratch server is reached through a connection "
                                         "pooler; name PostgreSQL itself in TICKQ_SCRATCH_URL")
            conn, own_copy = _take(admin, server_url, timeouts)
    except psycopg.Error as exc:
        raise _unavailable(exc) from None
    try:
        with conn:
            yield conn
    finally:
        if own_copy is not None:  # a pool database is left as it is: the next check puts it back
            drop_database(server_url, own_copy)


@dataclass(frozen=True)
class _Found:
    role: str
    ours: frozenset[str]  # templates and pool databases this role made (marked, owned)
    names: frozenset[str]  # every database named like one
    clean: frozenset[str]  # pool databases of ours put back when their check was done

    @property
    def template(self) -> str:
        return template_name(self.role)


def _look(admin: Connection) -> _Found:
    """This role's templates and pool databases, and every database named like one."""
    found = admin.execute(
        "SELECT current_user, d.datname, shobj_description(d.oid, 'pg_database') = ANY("
        "CASE WHEN starts_with(d.datname, %(template)s) THEN ARRAY[%(mark)s]"
        " ELSE ARRAY[%(pool_mark)s, %(clean_mark)s] END),"
        " d.datdba = (SELECT r.oid FROM pg_roles AS r WHERE r.rolname = current_user),"
        " shobj_description(d.oid, 'pg_database') = %(clean_mark)s"
        " FROM (SELECT) AS one LEFT JOIN pg_database AS d"
        " ON starts_with(d.datname, %(template)s) OR starts_with(d.datname, %(pool)s)",
        {"template": PREFIX, "mark": MARK, "pool": POOL_PREFIX, "pool_mark": POOL_MARK,
         "clean_mark": CLEAN_MARK}
    ).fetchall()
    ours = frozenset(row[1] for row in found if row[2] and row[3])
    return _Found(role=str(found[0][0]), ours=ours,
                  names=frozenset(row[1] for row in found if row[1] is not None),
                  clean=frozenset(row[1] for row in found if row[1] in ours and row[4]))


def _take(admin: Connection, server_url: str, timeouts: Timeouts
          ) -> tuple[Connection, str | None]:
    """A scratch connection and, when it is a copy of its own, that copy's name (else None:
    a pool database, held by POOL_LOCK)."""
    found = _look(admin)
    if found.template in found.names - found.ours:
        raise ScratchUnavailable(f"database {found.template} is in the way: tickq did not make it")
    pool = [pool_name(found.role, n) for n in range(POOL_SIZE)]
    for old in sorted(found.ours - {found.template, *pool}):
        # In use: an older tickq is copying or simulating in it right now; a later check drops it.
        with contextlib.suppress(psycopg.errors.ObjectInUse):
            admin.execute(sql.SQL("DROP DATABASE IF EXISTS {}").format(sql.Identifier(old)))
    # Those put back when their check was done first: they need no putting back now.
    for name in sorted(pool, key=lambda name: name not in found.clean):
        if name in found.names - found.ours:
            continue  # a database of that name tickq did not make
        made = name not in found.ours and _make_pool(admin, server_url, found, name)
        held = _hold(server_url, name, timeouts, fresh=made, marked=name in found.clean)
        if held is not None:
            return held, None
    name = f"tickq_scratch_{uuid.uuid4().hex[:12]}"
    _copy(admin, server_url, found, name)
    try:
        conn = connect(with_dbname(server_url, name), timeouts=timeouts)
        conn.execute(SESSION_SETTINGS)
    except BaseException:
        drop_database(server_url, name)
        raise
    return conn, name


def _make_pool(admin: Connection, server_url: str, found: _Found, name: str) -> bool:
    """Make pool database `name` from the template; False when another check made it at the
    same moment (pg_database's unique index says so when both got past the name check)."""
    try:
        _copy(admin, server_url, found, name)
    except (psycopg.errors.DuplicateDatabase, psycopg.errors.UniqueViolation):
        return False
    _comment(admin, name, POOL_MARK)
    return True


def _hold(server_url: str, name: str, timeouts: Timeouts, *, fresh: bool, marked: bool
          ) -> Connection | None:
    """Pool database `name`, held by POOL_LOCK and put back (unless `fresh` from the template);
    None when another check holds it, it was dropped meanwhile (by a newer tickq's check), or
    it cannot be put back (changed by hand?): then it is dropped, and a later check makes it
    again. One `marked` as put back (CLEAN_MARK, when the caller looked) is marked in use again
    before anything writes to it, and put back all the same: the mark only says which to take
    first, so a database changed since is never simulated in (its put-back then finds nothing
    to empty, about 3 ms)."""
    try:
        conn = connect(with_dbname(server_url, name), timeouts=timeouts)
    except psycopg.OperationalError:
        return None
    try:
        if conn.execute("SELECT pg_try_advisory_lock(%s)", (POOL_LOCK,)).fetchone() != (True,):
            conn.close()
            return None
        conn.execute(SESSION_SETTINGS)
        if marked:
            _comment(conn, name, POOL_MARK)
        if not fresh and not _reset(conn):
            conn.close()
            drop_database(server_url, name)
            return None
    except BaseException:
        conn.close()
        raise
    return conn


def _reset(conn: Connection) -> bool:
    """Put the database behind `conn` back to the template's state (queries/scratch_reset.sql);
    False when it cannot be (its tables changed by hand?). A cancel or a lost connection is
    raised."""
    try:
        conn.execute(load_query("scratch_reset"))
    except (psycopg.errors.QueryCanceled, psycopg.OperationalError):
        raise
    except psycopg.DatabaseError:
        return False
    return True


def _comment(conn: Connection, name: str, mark: str) -> None:
    conn.execute(sql.SQL("COMMENT ON DATABASE {} IS {}").format(
        sql.Identifier(name), sql.Literal(mark)))


def put_back(conn: Connection) -> None:
    """Put the pool database behind `conn` back to the template's state now, while the caller's
    check is still busy elsewhere, and mark it so (CLEAN_MARK): the next check takes it first.
    Only for a database the check will not use again, and never for a copy of its own (dropped
    at the end anyway). One that cannot be put back is left unmarked, for the next check that
    takes it to try, and drop it if it cannot either."""
    name = conn.info.dbname
    if name.startswith(POOL_PREFIX) and _reset(conn):
        _comment(conn, name, CLEAN_MARK)


def _copy(admin: Connection, server_url: str, found: _Found, name: str) -> None:
    """Create database `name` from the template, building the template first if it is
    missing."""
    template = found.template
    query = sql.SQL("CREATE DATABASE {} TEMPLATE {}").format(
        sql.Identifier(name), sql.Identifier(template))
    for attempt in range(COPY_TRIES):
        if attempt or template not in found.ours:
            _build(admin, server_url, template)
        try:
            admin.execute(query)
            return
        except (psycopg.errors.ObjectInUse, psycopg.errors.InvalidCatalogName):
            if attempt == COPY_TRIES - 1:
                raise
            time.sleep(0.1 * (attempt + 1))


def _build(admin: Connection, server_url: str, template: str) -> None:
    """Migrate a new database and rename it to `template`, unless `template` exists (another
    check built it meanwhile: theirs is the template)."""
    if admin.execute("SELECT FROM pg_database WHERE datname = %s", (template,)).fetchone():
        return
    building = f"tickq_scratch_build_{uuid.uuid4().hex[:12]}"
    admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(building)))
    try:
        with connect(with_dbname(server_url, building)) as conn:
            migrate(conn)
            conn.execute(load_query("scratch_lean"))
            conn.execute(load_query("scratch_unlogged"))
            conn.execute(load_query("scratch_seed"))
            _comment(conn, building, MARK)
        admin.execute(sql.SQL("ALTER DATABASE {} RENAME TO {}").format(
            sql.Identifier(building), sql.Identifier(template)))
    except (psycopg.errors.DuplicateDatabase, psycopg.errors.UniqueViolation):
        pass  # renamed at the same moment: pg_database's unique index says so
    finally:
        admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)")
                      .format(sql.Identifier(building)))


def _unavailable(exc: psycopg.Error) -> ScratchUnavailable:
    cause = exc.diag.message_primary if isinstance(exc, psycopg.DatabaseError) else None
    return ScratchUnavailable(cause or str(exc).strip() or type(exc).__name__)
