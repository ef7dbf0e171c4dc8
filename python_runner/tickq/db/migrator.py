"""The migrator and the SQL files shipped with the package.

``sql/`` (migrations and the API) reaches the package through the ``tickq/sql`` symlink; named
queries are ``tickq/db/queries/NAME.sql``.
"""

from __future__ import annotations

import contextlib
import functools
import re
from collections.abc import Iterator
from hashlib import sha256
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

import psycopg
from psycopg import sql

from tickq.db import baseline, schema_cache
from tickq.db.errors import MigrationError

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

MIGRATE_LOCK_KEY = "tickq.migrate"
MIGRATE_STATEMENT_TIMEOUT = "15min"  # a migration may rewrite a large table
_MIGRATION_NAME = re.compile(r"^(\d{4})_[a-z0-9_]+\.sql$")



# ---------------------------------------------------------------- SQL files


# The package's own folder, as a file path (what importlib.resources would give for a package on
# disk): a tick pays for no importlib.resources machinery.
_PACKAGE = Path(__file__).parent.parent


def sql_root() -> Path:
    """The ``sql/`` folder shipped with the package."""
    return _PACKAGE / "sql"


@functools.cache
def load_query(name: str) -> str:
    """The text of ``tickq/queries/NAME.sql``."""
    return (_PACKAGE / "db" / "queries" / f"{name}.sql").read_text(encoding="utf-8")


class Migration(NamedTuple):
    version: int
    name: str
    text: str


def migration_names(root: Traversable | Path | None = None) -> dict[int, str]:
    """version -> name of every ``migrations/NNNN_name.sql`` under ``root`` (none read)."""
    folder = (root or sql_root()) / "migrations"
    found: dict[int, str] = {}
    for entry in folder.iterdir() if folder.is_dir() else []:
        if not entry.name.endswith(".sql"):
            continue
        match = _MIGRATION_NAME.match(entry.name)
        if not match:
            raise MigrationError(f"{entry.name}: migration files are named NNNN_lower_snake.sql")
        version = int(match.group(1))
        if version in found:
            raise MigrationError(
                f"{entry.name}: version {version} is also used by {found[version]}")
        found[version] = entry.name
    return {v: found[v] for v in sorted(found)}


def migration_files(root: Traversable | Path | None = None) -> list[Migration]:
    """Every ``migrations/NNNN_name.sql`` under ``root``, by version."""
    folder = (root or sql_root()) / "migrations"
    return [Migration(v, name, (folder / name).read_text(encoding="utf-8"))
            for v, name in migration_names(root).items()]


def api_files(root: Traversable | Path | None = None) -> list[tuple[str, str]]:
    """``(name, text)`` of every ``api/*.sql`` under ``root``, sorted by name."""
    folder = (root or sql_root()) / "api"
    entries = [e for e in folder.iterdir() if e.name.endswith(".sql")] if folder.is_dir() else []
    return [(e.name, e.read_text(encoding="utf-8")) for e in sorted(entries, key=lambda e: e.name)]


def api_checksum(api: list[tuple[str, str]]) -> str:
    """sha256 of the API files' contents, concatenated in name order."""
    digest = sha256()
    for _name, text in api:
        digest.update(text.encode("utf-8"))
    return digest.hexdigest()


class Schema(NamedTuple):
    """What a current database records: every migration, and the API files' checksum ("" when
    there are none)."""

    migrations: dict[int, str]
    checksum: str


def expected_schema(root: Traversable | Path | None = None) -> Schema:
    """The schema the package's SQL files make, its API checksum remembered by the files' stat
    (db/schema_cache.py) so an unchanged package's files are not read again."""
    folder = root or sql_root()

    def compute() -> str:
        api = api_files(folder)
        return api_checksum(api) if api else ""

    if isinstance(folder, Path):
        checksum = schema_cache.checksum([folder / "migrations", folder / "api"], compute)
    else:  # a package inside a zip: no stat to key on
        checksum = compute()
    return Schema(migration_names(folder), checksum)


# ---------------------------------------------------------------- the migrator

# The schema is created only when missing: CREATE SCHEMA IF NOT EXISTS needs the right to create
# schemas in the database even when the schema exists, which an owner given the schema by
# sql/roles.sql does not have.
_BOOKKEEPING = """
DO $$ BEGIN
    IF to_regnamespace('tickq') IS NULL THEN
        CREATE SCHEMA tickq;
    END IF;
END $$;
CREATE TABLE IF NOT EXISTS tickq.migration (
    version int PRIMARY KEY,
    name text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE tickq.migration IS
    'One row per applied sql/migrations/NNNN_name.sql file; written by tickq.db.migrate.';
CREATE TABLE IF NOT EXISTS tickq.api_checksum (
    id boolean PRIMARY KEY DEFAULT true CHECK (id),
    checksum text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE tickq.api_checksum IS
    'sha256 of the sql/api/*.sql files last applied (one row); written by tickq.db.migrate.';
"""


def _execute_file(conn: psycopg.Connection, name: str, text: str) -> None:
    try:
        # No parameters: psycopg sends the text as one simple query, so several statements work.
        conn.execute(text)  # type: ignore[arg-type]
    except psycopg.Error as exc:
        diag = exc.diag
        place = name
        if diag.statement_position:
            place = f"{name}:{text[: int(diag.statement_position)].count(chr(10)) + 1}"
        message = f"{place}: {exc}"
        if diag.context:
            message += f" (context: {diag.context.strip()})"
        raise MigrationError(message) from exc


def _unknown_migrations(recorded: dict[int, str], known: set[int]) -> None:
    unknown = sorted(set(recorded) - known)
    if unknown:
        names = ", ".join(recorded[v] for v in unknown)
        raise MigrationError(
            f"the database has migrations this tickq does not know ({names}): "
            "it was migrated by a newer tickq"
        )


def _is_current(conn: psycopg.Connection, expected: Schema) -> bool:
    """Whether every migration is recorded and the API checksum matches, read without a lock
    or DDL: a dispatcher role may read the bookkeeping but not migrate (sql/roles.sql)."""
    try:
        versions, names, stored = conn.execute(
            "SELECT array(SELECT version FROM tickq.migration ORDER BY version),"
            " array(SELECT name FROM tickq.migration ORDER BY version),"
            " (SELECT checksum FROM tickq.api_checksum)"
        ).fetchone()  # type: ignore[misc]
    except (psycopg.errors.UndefinedTable, psycopg.errors.InvalidSchemaName):
        return False  # never migrated
    except psycopg.errors.InsufficientPrivilege as exc:
        raise MigrationError(
            f"role {conn.info.user} may not read tickq's migration bookkeeping "
            f"({exc.diag.message_primary}): give it an access with sql/roles.sql "
            "(tickq roles print)"
        ) from None
    _unknown_migrations(dict(zip(versions, names, strict=True)),
                        baseline.known(set(expected.migrations)))
    return set(versions) == set(expected.migrations) and stored == expected.checksum


def migrate(conn: psycopg.Connection, sql_dir: Traversable | Path | None = None) -> list[str]:
    """Bring the database up to date with ``sql/``; return what was applied.

    First reads, without a lock or DDL, whether the database is current. Only when it is not,
    each step runs in a transaction of its own that first takes
    ``pg_advisory_xact_lock(hashtext('tickq.migrate'))`` and then looks again whether its work
    is still to do: the bookkeeping tables, the adoption of the old chain (db/baseline.py),
    then the pending migrations, each with its row in ``tickq.migration``, and the API files
    when their checksum differs from ``tickq.api_checksum``, these last two together. So
    concurrent migrators apply each file once, the new tables and the new function bodies
    appear at once, and nothing is held by the session: a transaction pooler may hand each step
    to another server connection. ``conn`` must be in autocommit mode.
    """
    if not conn.autocommit:
        raise ValueError("migrate needs an autocommit connection")
    if _is_current(conn, expected_schema(sql_dir)):
        return []
    migrations = migration_files(sql_dir)
    api = api_files(sql_dir)
    try:
        # An administrator who may act as the schema's owner (a superuser, a member) migrates
        # as the owner: whatever it creates belongs to the owner, whose functions the other
        # roles call and whose tables those functions reach.
        owner = _owner(conn)
        with _step(conn, owner):
            conn.execute(_BOOKKEEPING)  # type: ignore[arg-type]
            recorded = dict(conn.execute("SELECT version, name FROM tickq.migration").fetchall())
        shipped = {m.version for m in migrations}
        _unknown_migrations(recorded, baseline.known(shipped))
        adopted = _adopt_chain(conn, owner, shipped, sql_dir or sql_root())
        if adopted:
            recorded = {baseline.BASELINE_VERSION: baseline.BASELINE}  # the chain's rows went
        pending = [m for m in migrations if m.version not in recorded]
        applied = [*adopted, *_apply_pending(conn, owner, pending, api)]
    except psycopg.errors.InsufficientPrivilege as exc:
        raise MigrationError(
            f"the schema is not current and role {conn.info.user} may not migrate it "
            f"({exc.diag.message_primary}): run `tickq migrate` as the schema's owner"
        ) from None
    return applied


def _owner(conn: psycopg.Connection) -> str | None:
    """The schema's owner when it is another role this one may act as, else None."""
    row = conn.execute(
        "SELECT pg_get_userbyid(n.nspowner) FROM pg_namespace AS n WHERE n.nspname = 'tickq'"
        " AND n.nspowner <> (SELECT r.oid FROM pg_roles AS r WHERE r.rolname = current_user)"
        " AND pg_has_role(current_user, n.nspowner, 'MEMBER')"
    ).fetchone()
    return str(row[0]) if row else None


@contextlib.contextmanager
def _step(conn: psycopg.Connection, owner: str | None) -> Iterator[None]:
    """A transaction holding the migrator's lock (waited for within the connection's lock
    timeout), under MIGRATE_STATEMENT_TIMEOUT, as `owner` if given."""
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s)),"
                     " set_config('statement_timeout', %s, true)",
                     (MIGRATE_LOCK_KEY, MIGRATE_STATEMENT_TIMEOUT))
        if owner:
            conn.execute(sql.SQL("SET LOCAL ROLE {}").format(sql.Identifier(owner)))
        yield


def _adopt_chain(conn: psycopg.Connection, owner: str | None, shipped: set[int],
                 root: Traversable | Path) -> list[str]:
    """A database the chain the baseline replaced made, recorded as at the baseline without
    running it, after the chain's files it lacks from ``root/chain`` (db/baseline.py); what was
    done, or nothing."""
    with _step(conn, owner):
        recorded = dict(conn.execute("SELECT version, name FROM tickq.migration").fetchall())
        adopt = baseline.adoption(recorded, shipped)
        if not adopt.replaced:
            return []
        for name in adopt.catch_up:
            _execute_file(conn, name, (root / "chain" / name).read_text(encoding="utf-8"))
        conn.execute("DELETE FROM tickq.migration WHERE version = ANY(%s)", (adopt.replaced,))
        if adopt.record_baseline:
            conn.execute("INSERT INTO tickq.migration (version, name) VALUES (%s, %s)",
                         (baseline.BASELINE_VERSION, baseline.BASELINE))
    return [*(f"migration {name}" for name in adopt.catch_up),
            f"migration {baseline.BASELINE} recorded: the database has the tables of the "
            f"{len(adopt.replaced) + len(adopt.catch_up)} migrations it replaced"]


def _apply_pending(conn: psycopg.Connection, owner: str | None, pending: list[Migration],
                   api: list[tuple[str, str]]) -> list[str]:
    """The migrations of `pending` that no other migrator applied meanwhile, each with its row,
    then the API files unless the database has their checksum: in one transaction, so no
    session ever sees a table of the new schema with a function body of the old one (a column
    renamed under a function that still names it) and a failure anywhere leaves the database
    as it was."""
    applied = []
    with _step(conn, owner):
        recorded = {v for (v,) in conn.execute("SELECT version FROM tickq.migration")}
        for m in pending:
            if m.version in recorded:
                continue
            _execute_file(conn, m.name, m.text)
            conn.execute("INSERT INTO tickq.migration (version, name) VALUES (%s, %s)",
                         (m.version, m.name))
            applied.append(f"migration {m.name}")
        if api and _apply_api(conn, api):
            applied.append(f"api {len(api)} files, checksum {api_checksum(api)[:12]}")
    return applied


def _apply_api(conn: psycopg.Connection, api: list[tuple[str, str]]) -> bool:
    """The API files and their checksum, unless the database has that checksum already (inside
    the migrator's transaction)."""
    checksum = api_checksum(api)
    row = conn.execute("SELECT checksum FROM tickq.api_checksum").fetchone()
    if row is not None and row[0] == checksum:
        return False
    # Tells sql/api/99_privileges.sql that every API file runs in this transaction.
    conn.execute("SELECT set_config('tickq.applying_api', %s, true)", (checksum,))
    for name, text in api:
        _execute_file(conn, name, text)
    conn.execute(
        "INSERT INTO tickq.api_checksum (checksum) VALUES (%s)"
        " ON CONFLICT (id) DO UPDATE SET checksum = excluded.checksum, applied_at = now()",
        (checksum,),
    )
    return True
