"""Registry texts that have already passed the schema, with what each parsed to, so that a tick
reading the same file again needs neither the TOML parser nor jsonschema.

Every tick reads the registry, and most ticks read the same text as the one before. Importing
jsonschema and building its validator costs a tick about a fifth of its wall time, and parsing
the TOML grows with the registry (about 70 ms for 1,000 kinds), while neither the verdict on a
text that passed nor what it parses to can change until the text, the schema or this code
does. So each text that passed is kept as one small file in the user's cache folder, named by
the digest of the text with the schema's and this code's version, holding the parsed document
as JSON: as Python keeps the bytecode of a source file beside it. Only passes are kept: a text
with problems is parsed and checked every time, so its problems are always reported in full.
The files are a cache: when one cannot be read or written, or it or its folder is writable by
others, the text is simply parsed and checked.
"""

from __future__ import annotations

import json
import os
from hashlib import sha256
from pathlib import Path
from typing import Any

# Raise it when what a kept file holds changes (the stat of the code below covers the rest).
_VERSION = b"2"
_KEEP = 32  # texts remembered: one per registry a user keeps, and a few edits of each
_FOLDER = "registry-texts-passed"
_NOT_OURS = 0o022  # a file or folder others may write could vouch for a text that never passed


# The code that decides what a text parses to and whether it passes: a new tickq (or an edited
# checkout) makes new keys, as a source's new modification time makes Python compile it again.
_CODE = ("parse.py", "shape.py", "shape_cache.py", "build.py")


def _code_stamp() -> bytes:
    here = Path(__file__).parent
    try:
        return "\0".join(f"{name}:{s.st_size}:{s.st_mtime_ns}" for name in _CODE
                         for s in [os.stat(here / name)]).encode()
    except OSError:
        return b"?"


def digest(text: str, schema_text: str) -> str:
    h = sha256(_VERSION + b"\0" + _code_stamp() + b"\0")
    h.update(sha256(schema_text.encode()).digest())
    h.update(text.encode())
    return h.hexdigest()


def _folder() -> Path | None:
    given = os.environ.get("TICKQ_CACHE_DIR")
    if not given:
        import platformdirs  # 10 ms of a wake-up; not needed when the folder is given

        given = platformdirs.user_cache_dir("tickq")
    folder = Path(given)
    # Without a home (no HOME, a user missing from the password database) the folder comes
    # out relative, to wherever tickq was started: no cache then.
    return folder / _FOLDER if folder.is_absolute() else None


def _ours(info: os.stat_result) -> bool:
    return info.st_uid == os.geteuid() and not info.st_mode & _NOT_OURS


def document(key: str) -> dict[str, Any] | None:
    """The parsed document of the text whose digest is `key`, if that text passed; else None."""
    folder = _folder()
    if folder is None:
        return None
    try:
        if not _ours(os.stat(folder)):
            return None
        fd = os.open(folder / f"{key}.json", os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        with open(fd, encoding="utf-8") as f:
            if not _ours(os.fstat(f.fileno())):
                return None
            doc = json.load(f)
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) else None


def remember(key: str, doc: dict[str, Any]) -> None:
    """Keep `doc`, the parse of the text whose digest is `key`, which passed; the oldest texts
    beyond the last _KEEP are forgotten. A document JSON cannot hold is not kept, nor one that
    holds a secret (an env value, a check-in or alert URL, a key): no copy of it is written."""
    import tempfile  # only when a text is new

    folder = _folder()
    if folder is None or _holds_secret(doc):
        return
    try:
        text = json.dumps(doc, ensure_ascii=False)
    except (TypeError, ValueError):
        return  # a value JSON has no type for (a date): parsed again each time
    try:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        if not _ours(os.stat(folder)):
            return
        fd, temp = tempfile.mkstemp(dir=folder, prefix=".new-", suffix=".part")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
            os.replace(temp, folder / f"{key}.json")
        except BaseException:
            os.unlink(temp)
            raise
        kept = sorted(folder.glob("*.json"), key=lambda p: p.stat().st_mtime_ns)
        for old in kept[:-_KEEP]:
            old.unlink(missing_ok=True)
    except OSError:
        pass  # only a cache


# Keys whose values are secrets wherever they stand (a kind's or a step's env, ping_url,
# settings.alert_url, [agents] api_key): a text holding one is parsed every time instead.
_SECRET_KEYS = frozenset({"env", "ping_url", "alert_url", "api_key"})


def _holds_secret(value: Any) -> bool:
    if isinstance(value, dict):
        return any(k in _SECRET_KEYS or _holds_secret(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_holds_secret(v) for v in value)
    return False
