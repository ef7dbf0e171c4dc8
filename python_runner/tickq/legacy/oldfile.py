"""The old file as `legacy import` and `legacy check` read it, and as `import --write` rewrites
it: read within a bound, refused when it is not a shell script or crontab (naming the line that
made it not one), and never written through a symbolic link that leaves its own folder (a link
to /etc/passwd would have a system file rewritten, often as root)."""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

from tickq.legacy import cron
from tickq.legacy.shell import LINE_MAX, read_old_file
from tickq.legacy.words import raw_words

FILE_MAX = 16 << 20  # bytes of an old file
_SHELLS = frozenset(("sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "busybox"))
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")


class OldFileRefused(Exception):
    """The old file cannot be read or written as asked; the message (one line) says why."""


def read(path: Path) -> str:
    """The text of `path`: a regular file (opened without blocking, so a FIFO does not hang)
    of at most FILE_MAX bytes, in UTF-8."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise OldFileRefused(f"{path}: file not found") from None
    except OSError as e:
        raise OldFileRefused(f"{path}: cannot read: {e.strerror or e}") from None
    with os.fdopen(fd, "rb") as f:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OldFileRefused(f"{path}: not a regular file")
        data = f.read(FILE_MAX + 1)
    if len(data) > FILE_MAX:
        raise OldFileRefused(f"{path}: larger than {FILE_MAX >> 20} MiB: not an old "
                             "orchestrator's script or crontab")
    try:  # a byte order mark (Notepad's "UTF-8 with BOM") is not part of the text
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise OldFileRefused(f"{path}: not UTF-8 text: {e}") from None


def write_target(path: Path) -> Path:
    """The file `import --write` replaces for `path`: itself, or what its symbolic link names
    when that stays in the link's own folder; a link out of it is refused."""
    if not path.is_symlink():
        return path
    target = path.resolve()
    if target.parent != path.absolute().parent.resolve():
        raise OldFileRefused(
            f"{path}: a symbolic link to {target}, outside its own folder; --write rewrites "
            "only a file in the old file's folder (give the file itself if it is the old "
            "orchestrator)")
    return target


def shape_problem(path: Path, text: str) -> str | None:
    """Why `text` is not a shell script or crontab, naming its first line that is not one; None
    when it could be one."""
    first = text.split("\n", 1)[0]
    if first.startswith("#!"):
        words = first[2:].split()
        program = Path(words[0]).name if words else ""
        if program == "env" and len(words) > 1:
            program = Path(words[1]).name
        if program not in _SHELLS:
            return (f"{path}:1: a #! line for {program or 'nothing'!r}: not a shell script or "
                    "crontab")
    for line in read_old_file(text):
        if not line.active or len(line.text) > LINE_MAX:
            continue
        why = _not_a_command(line.text)
        if why:
            shown = line.text.strip()[:60]
            return f"{path}:{line.first}: {why} ({shown!r}): not a shell script or crontab"
    return None


def _not_a_command(text: str) -> str | None:
    if cron.read_entry(text) is not None:
        return None
    words = raw_words(text)
    first = words[0] if words else ""
    if not first or _ASSIGNMENT.match(first):
        return None
    if ":" in first and not first.startswith(("'", '"')):
        return "a first word holding ':', which names no program a shell runs"
    return None
