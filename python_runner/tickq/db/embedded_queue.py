"""Which database of the embedded server is a registry's queue: one per registry folder.

Without DATABASE_URL every project of an OS user shares one embedded server; each registry
folder gets a database of its own there, so one project's sync never retires another's kinds.
Its name is ``tickq_<folder name>_<hash>``: the folder's name (lower case, each run of other
characters than a-z and 0-9 one ``_``, cut to fit) and the first 10 hex digits of the sha256 of
the folder's absolute path with its links resolved, 63 bytes at most (PostgreSQL's bound on an
identifier). The same folder reached by a relative path or a symlink is the same project.

Before this, every project used one database, ``tickq``. It stays the queue of the project that
last synced it: the registry it records (tickq.queue_registry) is this one, or, when it records
none (synced by a tickq that did not), its live kinds include one of this registry's. Any other
project gets its own database, so no one's queue is stranded or taken over.
"""

from __future__ import annotations

import contextlib
import os
import re
from hashlib import sha256
from pathlib import Path

from tickq.db.connect import create_database, reach, with_dbname

SHARED_DBNAME = "tickq"  # the one database of every project before
_MAX_IDENTIFIER = 63
_PREFIX = "tickq_"
_DIGITS = 10
_MAX_REGISTRY_BYTES = 4 << 20


def resolve_url(url: str | None = None, registry: str | Path | None = None) -> str:
    """``url``, else ``DATABASE_URL``, else the embedded server's database of the folder of
    ``registry`` (default ``./registry.toml``), created if new."""
    if url:
        return url
    env = os.environ.get("DATABASE_URL")
    if env:
        return env
    from tickq.db import embedded

    registry = registry or "registry.toml"
    server_url = embedded.ensure_server(on_start=_forget_choices)
    name = _remembered(registry)
    if name is None:
        name = queue_database(server_url, registry)
        _remember(registry, name)
    return with_dbname(server_url, name)


# Which database a registry folder's queue is, remembered in the data folder once it was asked
# (one file per folder, named by the folder's digest, holding the database's name): a command on
# a running server then connects once, to the queue itself. Forgotten whenever tickq starts the
# server, so a data folder made anew is asked again.
_CHOICES = "queues"


def _choice_file(registry: str | Path) -> Path:
    from tickq.db import embedded

    folder = registry_file(registry).parent
    return embedded.data_dir() / _CHOICES / sha256(str(folder).encode()).hexdigest()


def _remembered(registry: str | Path) -> str | None:
    try:
        name = _choice_file(registry).read_text().strip()
    except OSError:
        return None
    return name if re.fullmatch(r"tickq(_[a-z0-9_]{1,57})?", name) else None


def _remember(registry: str | Path, name: str) -> None:
    path = _choice_file(registry)
    with contextlib.suppress(OSError):  # without it, the next command asks again
        path.parent.mkdir(mode=0o700, exist_ok=True)
        temp = path.with_name(f".{path.name}.{os.getpid()}")
        temp.write_text(name + "\n")
        temp.replace(path)


def _forget_choices(_server_url: str) -> None:
    from tickq.db import embedded

    with contextlib.suppress(OSError):
        for entry in (embedded.data_dir() / _CHOICES).iterdir():
            entry.unlink()


def registry_file(registry: str | Path) -> Path:
    """The registry file as the queue records it: absolute, links resolved (it need not exist)."""
    return Path(registry).expanduser().resolve()


def database_name(registry: str | Path) -> str:
    """The embedded database of the registry folder of `registry` (see the module docstring)."""
    folder = registry_file(registry).parent
    digest = sha256(str(folder).encode()).hexdigest()[:_DIGITS]
    slug = re.sub(r"[^a-z0-9]+", "_", folder.name.lower()).strip("_")
    slug = slug[: _MAX_IDENTIFIER - len(_PREFIX) - 1 - _DIGITS].rstrip("_")
    return f"{_PREFIX}{slug}_{digest}" if slug else f"{_PREFIX}{digest}"


def queue_database(server_url: str, registry: str | Path, *, create: bool = True) -> str:
    """The name of `registry`'s queue on the embedded server at `server_url`: its folder's
    database, else the shared one of before when that is this project's; the folder's
    database is created when it is missing and `create`."""
    own = database_name(registry)
    with reach(server_url) as conn:
        found = {name for (name,) in conn.execute(
            "SELECT datname FROM pg_database WHERE datname IN (%s, %s)",
            (own, SHARED_DBNAME)).fetchall()}
    if own in found:
        return own
    if SHARED_DBNAME in found and _is_ours(with_dbname(server_url, SHARED_DBNAME), registry):
        return SHARED_DBNAME
    if create:
        create_database(server_url, own)
    return own


def _is_ours(url: str, registry: str | Path) -> bool:
    """Whether the shared database of before is `registry`'s queue."""
    path = str(registry_file(registry))
    with reach(url) as conn:
        recorded, kinds = conn.execute(
            "SELECT to_regclass('tickq.queue_registry') IS NOT NULL,"
            " to_regclass('tickq.job_kind') IS NOT NULL").fetchone() or (False, False)
        if recorded:
            row = conn.execute("SELECT path FROM tickq.queue_registry").fetchone()
            if row is not None and row[0] is not None:
                return bool(row[0] == path)
        if not kinds:
            return False
        live = {name for (name,) in conn.execute(
            "SELECT name FROM tickq.job_kind WHERE retired_at IS NULL"
            " AND name NOT LIKE 'tickq.%' AND name NOT LIKE 'agent.%'").fetchall()}
    return bool(live & _kind_names(registry))


def _kind_names(registry: str | Path) -> set[str]:
    """The kind names of the registry file, or none when it cannot be read (its own command
    says why)."""
    import tomllib  # only when the shared database of before may be this project's

    path = registry_file(registry)
    try:
        if not path.is_file() or path.stat().st_size > _MAX_REGISTRY_BYTES:  # no FIFO, no giant
            return set()
        doc = tomllib.loads(path.read_text())
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return set()
    kinds = doc.get("kinds")
    return set(kinds) if isinstance(kinds, dict) else set()
