"""Where a registry file is, as the user named it and as the disk has it.

A deploy that switches a ``current`` link between release folders, or a store path reached
through a profile link, changes where the file really is at every release while the name the
timer and the user give stays the same. So a project's queue is found by the path as given:
absolute, ``.`` and ``..`` taken away by name, links left as they are (``pwd -L``), a relative
path taken from the shell's current folder when ``PWD`` names it. The resolved path (links
followed) is kept beside it, so an old record of either still names the same file.
"""

from __future__ import annotations

import os
from pathlib import Path


def logical_cwd() -> Path:
    """The current folder as the shell names it (``PWD``, when it is absolute, holds no ``.``
    or ``..`` part and is this very folder), else as the kernel does."""
    pwd = os.environ.get("PWD", "")
    if os.path.isabs(pwd) and not {".", ".."} & set(pwd.split("/")):
        try:
            if os.path.samefile(pwd, "."):
                return Path(pwd)
        except OSError:
            pass
    return Path(os.getcwd())


def as_given(path: str | Path) -> Path:
    """`path` made absolute by name only: links are not followed."""
    given = Path(path).expanduser()
    if not given.is_absolute():
        given = logical_cwd() / given
    return Path(os.path.normpath(given))


def resolved(path: str | Path) -> Path:
    """`path` with every link followed (it need not exist)."""
    return Path(path).expanduser().resolve()
