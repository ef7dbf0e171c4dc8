"""The database door, the only code that speaks to PostgreSQL: connections (connect.py), the
migrator (migrator.py), the embedded server (embedded.py) and which of its databases is a
registry's queue (embedded_queue.py), what can fail (errors.py) and one
module per area of typed calls (api/)."""

from tickq.db.connect import (
    DEFAULT_TIMEOUTS,
    Timeouts,
    connect,
    create_database,
    drop_database,
    libpq_env,
    timeouts_of,
    url_params,
    with_dbname,
)
from tickq.db.embedded_queue import resolve_url
from tickq.db.migrator import (
    MIGRATE_LOCK_KEY,
    MIGRATE_STATEMENT_TIMEOUT,
    Migration,
    MigrationError,
    api_checksum,
    api_files,
    load_query,
    migrate,
    migration_files,
    sql_root,
)

__all__ = [
    "DEFAULT_TIMEOUTS", "MIGRATE_LOCK_KEY", "MIGRATE_STATEMENT_TIMEOUT",
    "Migration", "MigrationError", "Timeouts", "api_checksum", "api_files", "connect",
    "create_database", "drop_database", "libpq_env", "load_query", "migrate", "migration_files",
    "resolve_url", "sql_root", "timeouts_of", "url_params", "with_dbname",
]
