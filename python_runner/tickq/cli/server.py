"""`tickq server status|stop`: the embedded PostgreSQL tickq starts on first use (without
--database-url / DATABASE_URL) and keeps running between ticks; `status` prints the URL of the
registry's queue on it. One server holds the queues of every project of its OS user (as root,
of every root project: /var/lib/tickq), so both name every queue it serves: a `stop` stops
them all until a command of each starts it again."""

from __future__ import annotations

import argparse
from pathlib import Path

from tickq.db import embedded_queue, postmaster
from tickq.db.connect import reach
from tickq.db.errors import EXIT_NO, EXIT_OK, DatabaseUnreachable


def _queue_database(server_url: str, registry: str) -> str:
    """The database that is `registry`'s queue (not created if new): the folder's own, or the
    shared one of before when it is this project's (tickq.db.embedded_queue)."""
    try:
        return embedded_queue.queue_database(server_url, registry, create=False)
    except DatabaseUnreachable:
        return embedded_queue.database_name(registry)


# The simulator's scratch databases (tickq.db.scratch): no project's queue.
_SCRATCH = r"^tickq_scratch_((template|pool|build)_|[0-9a-f]{12}$)"


def _queues(server_url: str, registry: str) -> tuple[str, list[str]] | None:
    """This project's queue and every queue the server holds (one database per project of
    this OS user: as root, every root project's), or None when it cannot be asked."""
    try:
        with reach(server_url) as conn:
            names = [name for (name,) in conn.execute(
                "SELECT datname FROM pg_database WHERE datname LIKE 'tickq%%' AND NOT datistemplate"
                " AND datname !~ %s ORDER BY 1", (_SCRATCH,)).fetchall()]
    except DatabaseUnreachable:
        return None
    return _queue_database(server_url, registry), names


def _served(queues: tuple[str, list[str]] | None, verb: str = "serves") -> str:
    if queues is None:
        return f"the queues it {verb} could not be listed"
    mine, names = queues
    listed = ", ".join(f"{n} (this project's)" if n == mine else n for n in names)
    return f"it {verb} {len(names)} queue(s), one per project: {listed or 'none'}"


def cmd_server(args: argparse.Namespace) -> int:
    from tickq.db import embedded

    pgdata = embedded.pgdata_dir()
    state = postmaster.read(pgdata)
    if state is None:
        print(f"not running (data in {pgdata})")
        return EXIT_NO
    socket = state.socket_dir or "?"
    admin = embedded.queue_uri(Path(socket), "postgres") if state.socket_dir else None
    if args.action == "status":
        started = state.started.isoformat(timespec="seconds") if state.started else "?"
        print(f"running: pid {state.pid}, since {started}, port {state.port or '?'}, "
              f"socket folder {socket}, data in {pgdata}")
        # this registry folder's queue, the URL to give --database-url (peer authentication:
        # no password in it)
        if admin is not None:
            queues = _queues(admin, args.registry)
            name = queues[0] if queues else _queue_database(admin, args.registry)
            print(f"database URL: {embedded.queue_uri(Path(socket), name)}")
            print(_served(queues))
        return EXIT_OK
    # One server holds every project's queue of this OS user: say whose queues stop with it.
    queues = _queues(admin, args.registry) if admin is not None else None
    try:
        stopped = embedded.stop_server(pgdata)
    except Exception as exc:  # pg_ctl's failure, several lines: the first says why
        cause = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        print(f"tickq: could not stop the server of {pgdata}: {cause}")
        return EXIT_NO
    if not stopped:
        print(f"could not stop it (data in {pgdata})")
        return EXIT_NO
    print(f"stopped pid {state.pid}; {_served(queues, 'served')}; each stays stopped until "
          "a command of its project (a tick) starts the server again")
    return EXIT_OK

