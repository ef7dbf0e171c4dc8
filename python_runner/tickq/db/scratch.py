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

Copying the template is most of a check's set-up (a quarter of a second and more, nearly all
of it the server's CPU copying the catalog). So a check leaves one spare behind for the next
(`Spare`): a copy of the same template, nobody connected to it, named
`tickq_scratch_spare_<checksum>_<role>_<random>` and marked `tickq scratch spare`, made when a
core is free (the first of its windows simulated beside each other has ended: made alongside
the simulation, the copy slowed it by about what it saved). The next check renames the spare to
its first scratch database's name instead of copying (a rename is atomic: of two checks taking
the same spare one gets it, the other copies the template). A spare is never connected to
before it is taken, so it is exactly a fresh copy. There is at most one of a schema and role
(made only when none is there); spares of another schema go with its template.
"""

from __future__ import annotations

import contextlib
import functools
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
from psycopg import Connection, sql

from tickq.db.connect import Timeouts, connect, with_dbname
from tickq.db.errors import ScratchUnavailable
from tickq.db.migrator import api_files, load_query, migrate, migration_files
from tickq.digest import sha256

PREFIX = "tickq_scratch_template_"
MARK = "tickq scratch template"
SPARE_PREFIX = "tickq_scratch_spare_"
SPARE_MARK = "tickq scratch spare"
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
    return f"{PREFIX}{_schema_and_role(role)}"


def spare_prefix(role: str) -> str:
    """How the spares of this schema's template for `role` are named (a random part follows)."""
    return f"{SPARE_PREFIX}{_schema_and_role(role)}_"


def _schema_and_role(role: str) -> str:
    return f"{schema_checksum()}_{sha256(role.encode()).hexdigest()[:8]}"


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
    """Make database `name` a fresh copy of the template: a spare renamed, else a copy made
    now, building the template first if it is missing; drop this role's templates and spares
    of other schemas."""
    found = _ours(admin)
    role = str(found[0][0])
    template, spares = template_name(role), spare_prefix(role)
    ours = {row[1] for row in found if row[2] == MARK and row[3]}
    ours_spare = {row[1] for row in found if row[2] == SPARE_MARK and row[3]}
    if template in {row[1] for row in found} - ours:
        raise ScratchUnavailable(f"database {template} is in the way: tickq did not make it")
    stale = sorted(ours - {template}) + sorted(n for n in ours_spare if not n.startswith(spares))
    for old in stale:
        # In use: an older tickq is copying or taking it right now; a later check drops it.
        with contextlib.suppress(psycopg.errors.ObjectInUse):
            admin.execute(sql.SQL("DROP DATABASE IF EXISTS {}").format(sql.Identifier(old)))
    if template in ours:
        for spare in sorted(n for n in ours_spare if n.startswith(spares)):
            if _rename(admin, spare, name):
                return
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


def _ours(admin: Connection) -> list[tuple[Any, ...]]:
    """The role, then the templates and spares on the server: (role, name, mark, whether the
    role owns it) each (one row of the role alone when there is none)."""
    return admin.execute(
        "SELECT current_user, d.datname, shobj_description(d.oid, 'pg_database'),"
        " d.datdba = (SELECT r.oid FROM pg_roles AS r WHERE r.rolname = current_user)"
        " FROM (SELECT) AS one LEFT JOIN pg_database AS d"
        " ON starts_with(d.datname, %s) OR starts_with(d.datname, %s)",
        (PREFIX, SPARE_PREFIX)).fetchall()


def _rename(admin: Connection, old: str, new: str) -> bool:
    """Rename database `old` to `new`; False when another check took it first (gone) or a
    session is connected to it."""
    try:
        admin.execute(sql.SQL("ALTER DATABASE {} RENAME TO {}").format(
            sql.Identifier(old), sql.Identifier(new)))
    except (psycopg.errors.InvalidCatalogName, psycopg.errors.ObjectInUse):
        return False
    return True


class Spare:
    """A spare copy of the template for the next check, made in a thread of its own (`join`
    waits for it) when none is there. Made under a scratch database's name, marked, and only
    then renamed a spare, so a spare is always whole; a copy that fails or is cancelled is
    dropped, and the next check copies the template instead."""

    def __init__(self, server_url: str) -> None:
        self._server_url = server_url
        self._conn: Connection | None = None
        self._thread = threading.Thread(target=self._make, name="tickq-spare", daemon=True)
        self._thread.start()

    def _make(self) -> None:
        try:
            with connect(self._server_url) as conn:
                self._conn = conn
                found = _ours(conn)
                role = str(found[0][0])
                template, spares = template_name(role), spare_prefix(role)
                if any(r[1] == template and r[2] == MARK and r[3] for r in found) and not any(
                        str(r[1]).startswith(spares) and r[2] == SPARE_MARK and r[3]
                        for r in found):
                    _make_spare(conn, template, f"{spares}{uuid.uuid4().hex[:12]}")
        except psycopg.Error:
            pass  # no spare this time: the next check copies the template

    def cancel(self) -> None:
        """Cancel the copy if it is being made (then there is no spare this time)."""
        conn = self._conn
        if conn is not None and not conn.closed:
            with contextlib.suppress(psycopg.Error):
                conn.cancel_safe()

    def join(self) -> None:
        """Wait until the spare is made (or given up)."""
        self._thread.join()


def _make_spare(conn: Connection, template: str, spare: str) -> None:
    building = f"tickq_scratch_{uuid.uuid4().hex[:12]}"
    try:
        conn.execute(sql.SQL("CREATE DATABASE {} TEMPLATE {}").format(
            sql.Identifier(building), sql.Identifier(template)))
        conn.execute(sql.SQL("COMMENT ON DATABASE {} IS {}").format(
            sql.Identifier(building), sql.Literal(SPARE_MARK)))
        conn.execute(sql.SQL("ALTER DATABASE {} RENAME TO {}").format(
            sql.Identifier(building), sql.Identifier(spare)))
    except BaseException:
        with contextlib.suppress(psycopg.Error):
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)")
                         .format(sql.Identifier(building)))
        raise


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
