"""`tickq server status|stop`: the embedded PostgreSQL tickq starts on first use (without
--database-url / DATABASE_URL) and keeps running between ticks; `status` prints the URL of the
registry folder's queue on it."""

from __future__ import annotations

import argparse
import os
from datetime import UTC, datetime
from pathlib import Path

from tickq.db import embedded_queue
from tickq.db.errors import EXIT_NO, EXIT_OK, DatabaseUnreachable


def running(pgdata: Path) -> dict[str, str] | None:
    """What postmaster.pid says of a server that is running (pid, port, socket folder,
    started), or None. A pid file whose process is gone is a server that is not running."""
    try:
        lines = (pgdata / "postmaster.pid").read_text().splitlines()
        pid = int(lines[0])
    except (OSError, ValueError, IndexError):
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    except PermissionError:
        pass  # alive, run by the server's own user
    started = datetime.fromtimestamp(int(lines[2]), UTC) if len(lines) > 2 else None
    return {
        "pid": str(pid),
        "port": lines[3] if len(lines) > 3 else "?",
        "socket": lines[4] if len(lines) > 4 else "?",
        "started": started.isoformat(timespec="seconds") if started else "?",
    }


def _queue_database(server_url: str, registry: str) -> str:
    """The database that is `registry`'s queue (not created if new): the folder's own, or the
    shared one of before when it is this project's (tickq.db.embedded_queue)."""
    try:
        return embedded_queue.queue_database(server_url, registry, create=False)
    except DatabaseUnreachable:
        return embedded_queue.database_name(registry)


def cmd_server(args: argparse.Namespace) -> int:
    from tickq.db import embedded

    pgdata = embedded.pgdata_dir()
    state = running(pgdata)
    if args.action == "status":
        if state is None:
            print(f"not running (data in {pgdata})")
            return EXIT_NO
        print(f"running: pid {state['pid']}, since {state['started']}, port {state['port']}, "
              f"socket folder {state['socket']}, data in {pgdata}")
        # this registry folder's queue, the URL to give --database-url (peer authentication:
        # no password in it)
        if state["socket"] not in ("?", ""):
            socket_dir = Path(state["socket"])
            name = _queue_database(embedded.queue_uri(socket_dir, "postgres"), args.registry)
            print(f"database URL: {embedded.queue_uri(socket_dir, name)}")
        return EXIT_OK
    if state is None:
        print(f"not running (data in {pgdata})")
        return EXIT_NO
    try:
        stopped = embedded.stop_server(pgdata)
    except Exception as exc:  # pg_ctl's failure, several lines: the first says why
        cause = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        print(f"tickq: could not stop the server of {pgdata}: {cause}")
        return EXIT_NO
    print(f"stopped pid {state['pid']}" if stopped else f"could not stop it (data in {pgdata})")
    return EXIT_OK if stopped else EXIT_NO

