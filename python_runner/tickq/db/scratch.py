"""Scratch databases for the simulator (`tickq check`, `tickq simulate`): each one a copy
(`CREATE DATABASE ... TEMPLATE`) of a migrated template that stays on the server while the schema
is unchanged, so a check copies a database instead of migrating one.

The template is named after the schema's checksum (every migration and API file) and its owner:
`tickq_scratch_template_<checksum>_<role>`, and carries the comment `tickq scratch template`, so
it is never taken for a user's database, nor a user's database for it. It is built under a name
of its own and renamed only once migrated, so no copy is ever taken of a half-built one; two
checks that build it at once keep the first. Templates of this role with another checksum (an
older tickq's) are dropped by the next check. The tables the simulation writes are unlogged in
it (queries/scratch_unlogged.sql), and so in every copy. A scratch database is dropped when its
simulation ends.
"""

from __future__ import annotations

import contextlib
import functools
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import psycopg
from psycopg import Connection, sql

from tickq.db.connect import Timeouts, connect, with_dbname
from tickq.db.errors import ScratchUnavailable
from tickq.db.migrator import api_files, load_query, migrate, migration_files
from tickq.digest import sha256

PREFIX = "tickq_scratch_template_"
MARK = "tickq scratch template"
# The scratch session's settings, one round trip. Nothing in a scratch database outlives it, so
# its commits need not wait for the disk. The simulation runs the same few statements thousands
# of times on tables of a few rows: with custom plans (the default for a statement with
# parameters) many of them are planned again on every call, about a tenth of a simulation's
# time; their generic plans give the same rows (every query the simulation's outcome depends on
# orders by a unique key) in a fifth less backend CPU time (bench/README.md).
SESSION_SETTINGS = ("SELECT set_config('synchronous_commit', 'off', false),"
                    " set_config('plan_cache_mode', 'force_generic_plan', false)")
COPY_TRIES = 5  # a template another check is still building or renaming is in use for a moment


@functools.cache
def schema_checksum() -> str:
    """12 hex digits of sha256 over every migration (name and text) and API file shipped, and
    what the template's build does after them (queries/scratch_unlogged.sql)."""
    digest = sha256()
    for m in migration_files():
        digest.update(f"{m.name}\0{m.text}\0".encode())
    for name, text in api_files():
        digest.update(f"{name}\0{text}\0".encode())
    digest.update(load_query("scratch_unlogged").encode())
    return digest.hexdigest()[:12]


def template_name(role: str) -> str:
    """The template of this schema for databases `role` creates (it must own what it copies)."""
    return f"{PREFIX}{schema_checksum()}_{sha256(role.encode()).hexdigest()[:8]}"


@contextmanager
def scratch(server_url: str, timeouts: Timeouts) -> Iterator[Connection]:
    """An autocommit connection to a fresh copy of the migrated template; dropped afterwards.
    Commits need not wait for the disk: nothing in a scratch database outlives it. Every
    statement runs its generic plan (SESSION_SETTINGS)."""
    try:
        admin = connect(server_url)
    except psycopg.Error as exc:
        raise _unavailable(exc) from None
    with admin:
        name = f"tickq_scratch_{uuid.uuid4().hex[:12]}"
        try:
            _copy(admin, server_url, name)
        except psycopg.Error as exc:
            raise _unavailable(exc) from None
        try:
            with connect(with_dbname(server_url, name), timeouts=timeouts) as conn:
                conn.execute(SESSION_SETTINGS)
                yield conn
        finally:
            admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)")
                          .format(sql.Identifier(name)))


def _copy(admin: Connection, server_url: str, name: str) -> None:
    """Create database `name` from the template, building the template first if it is missing;
    drop this role's templates of other schemas."""
    found = admin.execute(
        "SELECT current_user, d.datname, shobj_description(d.oid, 'pg_database'),"
        " d.datdba = (SELECT r.oid FROM pg_roles AS r WHERE r.rolname = current_user)"
        " FROM (SELECT) AS one LEFT JOIN pg_database AS d ON starts_with(d.datname, %s)",
        (PREFIX,)).fetchall()
    role = str(found[0][0])
    template = template_name(role)
    ours = {row[1] for row in found if row[2] == MARK and row[3]}
    if template in {row[1] for row in found} - ours:
        raise ScratchUnavailable(f"database {template} is in the way: tickq did not make it")
    for old in sorted(ours - {template}):
        # In use: an older tickq is copying it right now; a later check drops it.
        with contextlib.suppress(psycopg.errors.ObjectInUse):
            admin.execute(sql.SQL("DROP DATABASE IF EXISTS {}").format(sql.Identifier(old)))
    query = sql.SQL("CREATE DATABASE {} TEMPLATE {}").format(
        sql.Identifier(name), sql.Identifier(template))
    for attempt in range(COPY_TRIES):
        if attempt or template not in ours:
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
            conn.execute(load_query("scratch_unlogged"))
            conn.execute(sql.SQL("COMMENT ON DATABASE {} IS {}").format(
                sql.Identifier(building), sql.Literal(MARK)))
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
