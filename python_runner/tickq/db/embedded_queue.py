"""Which database of the embedded server is a project's queue: one per project.

Without DATABASE_URL every project of an OS user shares one embedded server; each project gets
a database of its own there, so one project's sync never retires another's kinds. A project
goes by the names `keys` gives, most specific first: its registry's ``settings.project``, the
registry's folder as given (a deploy's ``current`` link not followed: every release behind it
is one project), the folder with links followed (the same folder reached through a link; and
what named a queue before, so such a queue is found and kept). A key's database is
``tickq_<name>_<hash>``: the key's last name (lower case, each run of other characters than a-z
and 0-9 one ``_``, cut to fit) and the first 10 hex digits of the sha256 of the key, 63 bytes
at most (PostgreSQL's bound on an identifier).

The queue is the first database that exists of: each key's own, or the one recorded for it;
else the shared ``tickq`` of before when it is this project's; else the first key's, created.
Which database each key led to is recorded in the data folder (``projects/``), so a key found
through another (a release folder through ``current``) finds the same queue after the next
deploy, and a name added to a registry keeps the queue of its folder.

Before per-folder databases, every project used one database, ``tickq``. It stays the queue of
the project that last synced it (tickq.same_project), or, when it records none, whose live
kinds include one of this registry's.
"""

from __future__ import annotations

import contextlib
import os
import re
from pathlib import Path

from tickq.db.connect import create_database, reach, with_dbname
from tickq.digest import sha256
from tickq.registry.place import as_given, resolved

SHARED_DBNAME = "tickq"  # the one database of every project before
_MAX_IDENTIFIER = 63
_PREFIX = "tickq_"
_DIGITS = 10
_MAX_REGISTRY_BYTES = 4 << 20
_PROJECT = "project:"  # a key that is a project's name, not a folder
_NAME = re.compile(r"tickq(_[a-z0-9_]{1,57})?")


def resolve_url(url: str | None = None, registry: str | Path | None = None) -> str:
    """``url``, else ``DATABASE_URL``, else the embedded server's database of the project of
    ``registry`` (default ``./registry.toml``), created if new."""
    if url:
        return url
    env = os.environ.get("DATABASE_URL")
    if env:
        return env
    from tickq.db import embedded

    registry = registry or "registry.toml"
    server_url = embedded.ensure_server(on_start=_forget_choices)
    choice, stamp = _choice_file(registry), _stamp(registry)
    name = _read_name(choice, stamp)
    if name is None:
        name = queue_database(server_url, registry)
        _write_name(choice, name, stamp)
    return with_dbname(server_url, name)


def project_keys(registry: str | Path) -> list[str]:
    """The names `registry`'s project goes by, most specific first (see the module docstring)."""
    name = _project_name(registry)
    keys = [_PROJECT + name] if name else []
    keys += [str(as_given(registry).parent), str(resolved(registry).parent)]
    return list(dict.fromkeys(keys))


def database_name(registry: str | Path) -> str:
    """The database a new queue of `registry`'s project gets: its first key's."""
    return _name_of(project_keys(registry)[0])


def _name_of(key: str) -> str:
    digest = sha256(key.encode()).hexdigest()[:_DIGITS]
    last = key.removeprefix(_PROJECT) if key.startswith(_PROJECT) else Path(key).name
    slug = re.sub(r"[^a-z0-9]+", "_", last.lower()).strip("_")
    slug = slug[: _MAX_IDENTIFIER - len(_PREFIX) - 1 - _DIGITS].rstrip("_")
    return f"{_PREFIX}{slug}_{digest}" if slug else f"{_PREFIX}{digest}"


def queue_database(server_url: str, registry: str | Path, *, create: bool = True) -> str:
    """The name of `registry`'s queue on the embedded server at `server_url` (see the module
    docstring); created when none exists and `create`."""
    keys = project_keys(registry)
    with reach(server_url) as conn:
        existing = {name for (name,) in conn.execute(
            "SELECT datname FROM pg_database WHERE datname LIKE 'tickq%'").fetchall()}
    candidates = [n for key in keys for n in (_name_of(key), _read_name(_record(key), ""))]
    found = next((name for name in candidates if name in existing), None)
    if found is None and SHARED_DBNAME in existing and _is_ours(
            with_dbname(server_url, SHARED_DBNAME), registry):
        found = SHARED_DBNAME
    if found is None:
        found = _name_of(keys[0])
        if not create:
            return found
        create_database(server_url, found)
    for key in keys:
        if _name_of(key) != found:
            _write_name(_record(key), found, "")
    return found


# Which database a registry leads to, remembered in the data folder: `queues/` once asked, one
# file per registry file, valid while the file is unchanged (a command on a running server then
# connects once, to the queue itself, and reads no TOML for it; forgotten whenever tickq starts
# the server, so a data folder made anew is asked again); `projects/` for good, one file per key
# whose own database is not its queue (read only when the server is asked, and only a database
# that exists counts).
_CHOICES = "queues"
_RECORDS = "projects"


def _choice_file(registry: str | Path) -> Path:
    from tickq.db import embedded

    both = f"{as_given(registry)}\0{resolved(registry)}"
    return embedded.data_dir() / _CHOICES / sha256(both.encode()).hexdigest()


def _stamp(registry: str | Path) -> str:
    """The registry file's size and modification time: an edit (a project named) asks again."""
    try:
        info = resolved(registry).stat()
    except OSError:
        return "-"
    return f"{info.st_size}.{info.st_mtime_ns}"


def _record(key: str) -> Path:
    from tickq.db import embedded

    return embedded.data_dir() / _RECORDS / sha256(key.encode()).hexdigest()


def _read_name(path: Path, stamp: str) -> str | None:
    try:
        name, _, kept = path.read_text().strip().partition(" ")
    except OSError:
        return None
    return name if _NAME.fullmatch(name) and kept == stamp else None


def _write_name(path: Path, name: str, stamp: str) -> None:
    with contextlib.suppress(OSError):  # without it, the next command asks again
        path.parent.mkdir(mode=0o700, exist_ok=True)
        temp = path.with_name(f".{path.name}.{os.getpid()}")
        temp.write_text(f"{name} {stamp}".strip() + "\n")
        temp.replace(path)


def _forget_choices(_server_url: str) -> None:
    from tickq.db import embedded

    with contextlib.suppress(OSError):
        for entry in (embedded.data_dir() / _CHOICES).iterdir():
            entry.unlink()


def _is_ours(url: str, registry: str | Path) -> bool:
    """Whether the shared database of before is `registry`'s queue: its registry of record is
    this project (tickq.queue_registry_at; a queue not yet migrated to know it recorded the
    file with links followed), or it records none and its live kinds include one of ours."""
    import json

    source = {"path": str(as_given(registry)), "resolved": str(resolved(registry)),
              "project": _project_name(registry)}
    with reach(url) as conn:
        asks, recorded, kinds = conn.execute(
            "SELECT to_regproc('tickq.queue_registry_at') IS NOT NULL,"
            " to_regclass('tickq.queue_registry') IS NOT NULL,"
            " to_regclass('tickq.job_kind') IS NOT NULL").fetchone() or (False, False, False)
        if asks:
            row = conn.execute("SELECT synced, this_project FROM tickq.queue_registry_at(%s)",
                               (json.dumps(source),)).fetchone()
            if row is not None and row[0]:
                return bool(row[1])
        elif recorded:
            row = conn.execute("SELECT path FROM tickq.queue_registry").fetchone()
            if row is not None and row[0] is not None:
                return bool(row[0] == source["resolved"])
        if not kinds:
            return False
        live = {name for (name,) in conn.execute(
            "SELECT name FROM tickq.job_kind WHERE retired_at IS NULL"
            " AND name NOT LIKE 'tickq.%' AND name NOT LIKE 'agent.%'").fetchall()}
    return bool(live & _registry_doc(registry).get("kinds", {}).keys())


def _project_name(registry: str | Path) -> str | None:
    """The registry's settings.project, if any (the database judges it: the commands that read
    the registry refuse a name that is none)."""
    settings = _registry_doc(registry).get("settings")
    name = settings.get("project") if isinstance(settings, dict) else None
    return name if isinstance(name, str) and name else None


def _registry_doc(registry: str | Path) -> dict:
    """The registry file's TOML document, or an empty one when it cannot be read (its own
    command says why)."""
    import tomllib

    path = resolved(registry)
    try:
        if not path.is_file() or path.stat().st_size > _MAX_REGISTRY_BYTES:  # no FIFO, no giant
            return {}
        doc = tomllib.loads(path.read_text(encoding="utf-8-sig"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return {}
    kinds = doc.get("kinds")
    if not isinstance(kinds, dict):
        doc["kinds"] = {}
    return doc
