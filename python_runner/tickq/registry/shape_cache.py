"""Which registry texts have already passed the schema, so a tick need not import jsonschema.

Every tick reads the registry, and most ticks read the same text as the one before. Importing
jsonschema and building its validator costs a tick about a fifth of its wall time, while the
verdict on a text that passed once cannot change until the text or the schema does. So the
digests of the last texts that passed (with the schema's own digest) are kept in a small file
in the user's cache folder. Only passes are kept: a text with problems is checked every time,
so its problems are always reported in full. The file is a cache: when it cannot be read or
written, or is writable by others, the schema is simply checked.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

# Raise it when what decides a pass changes in tickq.registry.shape (not only the schema).
_VERSION = b"1"
_KEEP = 32  # texts remembered: one per registry a user keeps, and a few edits of each
_FILE = "registry-shapes-passed"


def digest(text: str, schema_text: str) -> str:
    h = hashlib.sha256(_VERSION + b"\0")
    h.update(hashlib.sha256(schema_text.encode()).digest())
    h.update(text.encode())
    return h.hexdigest()


def _path() -> Path | None:
    given = os.environ.get("TICKQ_CACHE_DIR")
    if not given:
        import platformdirs  # 10 ms of a wake-up; not needed when the folder is given

        given = platformdirs.user_cache_dir("tickq")
    folder = Path(given)
    # Without a home (no HOME, a user missing from the password database) the folder comes
    # out relative, to wherever tickq was started: no cache then.
    return folder / _FILE if folder.is_absolute() else None


def _read(path: Path | None) -> list[str]:
    if path is None:
        return []
    try:
        with open(path, encoding="utf-8") as f:
            info = os.fstat(f.fileno())
            if info.st_uid != os.geteuid() or info.st_mode & 0o022:
                return []  # someone else could vouch for a text that never passed
            return f.read(_KEEP * 65).split()
    except (OSError, ValueError):
        return []


def passed(key: str) -> bool:
    return key in _read(_path())


def remember(key: str) -> None:
    import tempfile  # only when a text is new

    path = _path()
    if path is None:
        return
    kept = [k for k in _read(path) if k != key][-(_KEEP - 1):] + [key]
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{_FILE}.")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write("\n".join(kept) + "\n")
            os.replace(temp, path)
        except BaseException:
            os.unlink(temp)
            raise
    except OSError:
        pass  # only a cache
