"""An old file as `legacy import` and `legacy check` read it, and as `import --write` rewrites
it: read within a bound (its kind is readers.py's to tell), and never written through a
symbolic link that leaves its own folder (a link to /etc/passwd would have a system file
rewritten, often as root)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

FILE_MAX = 16 << 20  # bytes of an old file


class OldFileRefused(Exception):
    """The old file cannot be read or written as asked; the message (one line) says why."""


def read(path: Path) -> str:
    """The text of `path`: a regular file (opened without blocking, so a FIFO does not hang)
    of at most FILE_MAX bytes, in UTF-8 (a binary property list as Latin-1, for its reader to
    read again as bytes)."""
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
        raise OldFileRefused(f"{path}: larger than {FILE_MAX >> 20} MiB: no crontab, script, "
                             "unit or plist is")
    if data.startswith(b"bplist"):
        return data.decode("latin-1")
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
