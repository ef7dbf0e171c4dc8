"""The API files' checksum, known without reading them while the package's SQL files are the
ones it was computed from.

Every command checks that the database's schema is current, and that check compares the
checksum of the sql/api files with the one the database recorded. Reading and hashing the files
on every tick costs more than the query. So the checksum is kept in a small file in the user's
cache folder, keyed by what a stat of each SQL file says (folder, name, size, modification and
change times, inode): a file edited, added, removed or replaced changes the key, and the files
are read and hashed again. The file is a cache: when it cannot be read or written, or is
writable by others, the files are simply read.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from hashlib import sha256
from pathlib import Path

_VERSION = b"1"
_KEEP = 16  # sql folders remembered: an installed tickq, a checkout or two, their tests' toys
_FILE = "schema-checksums"


def key(folders: list[Path]) -> str | None:
    """The stat key of every .sql file of `folders`; None when one cannot be listed."""
    h = sha256(_VERSION + b"\0")
    try:
        for folder in folders:
            h.update(os.fsencode(folder.absolute()) + b"\0")
            for entry in sorted(os.scandir(folder), key=lambda e: e.name):
                if entry.name.endswith(".sql"):
                    s = entry.stat()
                    h.update(f"{entry.name}\0{s.st_size}\0{s.st_mtime_ns}\0{s.st_ctime_ns}\0"
                             f"{s.st_ino}\0".encode())
    except OSError:
        return None
    return h.hexdigest()


def _path() -> Path | None:
    given = os.environ.get("TICKQ_CACHE_DIR")
    if not given:
        import platformdirs  # not needed when the folder is given

        given = platformdirs.user_cache_dir("tickq")
    folder = Path(given)
    return folder / _FILE if folder.is_absolute() else None


def _read(path: Path | None) -> dict[str, str]:
    if path is None:
        return {}
    try:
        with open(path, encoding="utf-8") as f:
            info = os.fstat(f.fileno())
            if info.st_uid != os.geteuid() or info.st_mode & 0o022:
                return {}  # someone else could vouch for a schema that is not the package's
            pairs = [line.split() for line in f.read(_KEEP * 130).splitlines()]
    except (OSError, ValueError):
        return {}
    return {p[0]: p[1] for p in pairs if len(p) == 2}


def checksum(folders: list[Path], compute: Callable[[], str]) -> str:
    """The checksum `compute` returns for the files of `folders`, remembered by their stat key."""
    found = key(folders)
    if found is None:
        return compute()
    path = _path()
    kept = _read(path)
    if found in kept:
        return kept[found]
    value = compute()
    _write(path, [*[(k, v) for k, v in kept.items() if k != found][-(_KEEP - 1):],
                  (found, value)])
    return value


def _write(path: Path | None, pairs: list[tuple[str, str]]) -> None:
    import tempfile

    if path is None:
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{_FILE}.")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write("".join(f"{k} {v}\n" for k, v in pairs))
            os.replace(temp, path)
        except BaseException:
            os.unlink(temp)
            raise
    except OSError:
        pass  # only a cache
