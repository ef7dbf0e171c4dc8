"""The registry file: read it, check its shape (registry.schema.json), build the model.

Every problem is reported at once, each naming the file, the kind and the key. The rules on
values are the database's (tickq.registry_problems); see tickq.db.verdict."""

from __future__ import annotations

import datetime as dt
import os
import re
import stat
from pathlib import Path
from typing import Any

from tickq.registry import shape_cache
from tickq.registry.build import build_registry
from tickq.registry.model import Problem, Registry, RegistryError
from tickq.registry.place import as_given
from tickq.registry.shape import schema_text, shape_problems

# A registry is a text file a person writes; anything larger is a mistake (or /dev/zero).
MAX_FILE_BYTES = 1024 * 1024

def load_registry(path: str | Path) -> Registry:
    """Read and check a registry file; `cwd` values are relative to its directory."""
    path = Path(path)

    def refuse(message: str) -> RegistryError:
        return RegistryError([Problem(str(path), None, None, message)])

    try:
        # Opened without blocking (a FIFO would wait for a writer) and read only when it is a
        # regular file of a registry's size: /dev/zero never ends.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                raise refuse(f"not a regular file ({_file_type(info.st_mode)})")
            if info.st_size > MAX_FILE_BYTES:
                raise refuse(f"larger than {MAX_FILE_BYTES} bytes ({info.st_size}): not a registry")
            with os.fdopen(fd, "rb", closefd=False) as f:
                data = f.read(MAX_FILE_BYTES + 1)
        finally:
            os.close(fd)
        if len(data) > MAX_FILE_BYTES:
            raise refuse(f"larger than {MAX_FILE_BYTES} bytes: not a registry")
        # A byte order mark (Notepad's "UTF-8 with BOM") is not part of the text, as for
        # most TOML tools.
        text = data.decode("utf-8-sig")
    except FileNotFoundError:
        raise refuse(_not_found(path)) from None
    except UnicodeDecodeError as e:
        raise refuse(f"not UTF-8 text: {e}") from None
    except OSError as e:
        raise refuse(f"cannot read: {e.strerror or e}") from None
    return parse_registry(text, str(path), path.absolute().parent)


def _not_found(path: Path) -> str:
    """Where the registry was looked for, and how to name another."""
    found = as_given(path)
    return (f"file not found in {found.parent} (name the registry with --registry FILE or "
            "TICKQ_REGISTRY=FILE)")


def _file_type(mode: int) -> str:
    for test, name in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket")):  # fmt: skip
        if test(mode):
            return name
    return "not a file"


def parse_registry(text: str, path_for_messages: str | Path, base_dir: str | Path) -> Registry:
    """Check the shape of registry TOML `text`; raise RegistryError listing every problem. A
    text that passed before is not parsed or checked again (tickq.registry.shape_cache)."""
    file = str(path_for_messages)
    key = shape_cache.digest(text, schema_text())
    doc = shape_cache.document(key)
    problems: list[Problem] = []
    if doc is None:
        doc = _parsed(text, file)
        problems = shape_problems(doc, file)
        if not problems:
            shape_cache.remember(key, doc)
    registry = build_registry(doc, file, Path(base_dir).absolute(), problems)
    if problems:
        raise RegistryError(problems)
    return registry


def _parsed(text: str, file: str) -> dict[str, Any]:
    """The TOML document of `text`, its clock times as text."""
    import tomllib  # only for a text not parsed before

    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        message = f"invalid TOML: {e}{_unquoted_hint(text, str(e))}"
        raise RegistryError([Problem(file, None, None, message)]) from None
    _clock_times_as_text(doc)
    return doc


_AT_LINE = re.compile(r"\(at line (\d+), column \d+\)")
_KEY_VALUE = re.compile(r"\s*([A-Za-z0-9_-]+)\s*=\s*([^\s\"'\[{#][^#]*?)\s*(#.*)?")


def _unquoted_hint(text: str, error: str) -> str:
    """For `every = 5m`, what to write: text values (durations, names) are quoted in TOML."""
    found = _AT_LINE.search(error)
    lines = text.splitlines()
    if found is None or not 0 < int(found.group(1)) <= len(lines):
        return ""
    line = _KEY_VALUE.fullmatch(lines[int(found.group(1)) - 1])
    if line is None:
        return ""
    key, value = line.group(1), line.group(2)
    import tomllib

    try:
        tomllib.loads(f"v = {value}")
    except tomllib.TOMLDecodeError:
        return f'; text is quoted in TOML: write {key} = "{value}"'
    return ""


def _clock_times_as_text(doc: dict[str, Any]) -> None:
    """TOML has unquoted local times (at = 06:00); they go on as "HH:MM" text, and the database
    judges them like any other ("06:00:30" is not a whole minute)."""
    kinds = doc.get("kinds")
    for table in kinds.values() if isinstance(kinds, dict) else ():
        at = table.get("at") if isinstance(table, dict) else None
        if isinstance(at, dt.time):
            table["at"] = _hh_mm(at)
        elif isinstance(at, list):
            table["at"] = [_hh_mm(t) if isinstance(t, dt.time) else t for t in at]


def _hh_mm(t: dt.time) -> str:
    return t.strftime("%H:%M") if (t.second, t.microsecond) == (0, 0) else t.isoformat()
