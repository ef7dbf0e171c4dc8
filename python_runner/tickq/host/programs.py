"""Where a registry command starts: the one rule the dispatcher runs by and `check` checks.

A program named with a "/" (``bin/send-email``, ``./x``) is relative to the registry's folder,
whatever the kind's ``cwd`` says, so a registry and its scripts move together; a bare name
(``python3``) is looked up in PATH as the command will see it (the kind's ``env`` over the
dispatcher's environment), entry by entry as execvp(3) does: an entry this user may not search
or execute is skipped, and named when no other entry has the program. The command runs in
``cwd``, which defaults to the registry's folder.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

from tickq.registry import Registry


class Resolved(NamedTuple):
    argv: tuple[str, ...]  # argv[0] absolute when it names a path
    cwd: Path
    problem: str | None  # why it cannot start, or None


def resolve(
    argv: Sequence[str], folder: Path, cwd: Path | None = None,
    env: Mapping[str, str] | None = None, environ: Mapping[str, str] | None = None,
) -> Resolved:
    """`argv` as the dispatcher starts it from a registry in `folder`; `problem` says why it
    could not start (missing program, no execute bit, not on PATH, missing cwd)."""
    workdir = Path(cwd) if cwd is not None else folder
    if not argv:
        return Resolved((), workdir, "the command is empty")
    program = argv[0]
    if "/" in program:
        path = Path(program) if os.path.isabs(program) else folder / program
        return Resolved((str(path), *argv[1:]), workdir,
                        _cwd_problem(workdir) or _program_problem(path, program))
    search = {**(os.environ if environ is None else environ), **(env or {})}.get("PATH", "")
    problem = _path_problem(program, search, workdir)
    return Resolved(tuple(argv), workdir, _cwd_problem(workdir) or problem)


# What execvp(3) does with a PATH entry whose candidate execve refuses: these errors go on to
# the next entry; EACCES (a folder this user may not search, a file it may not execute) goes
# on too, and is the error when no entry runs; any other error ends the search.
_NEXT_ENTRY = frozenset((errno.ENOENT, errno.ENOTDIR, errno.ESTALE, errno.ENODEV,
                         errno.ETIMEDOUT))


def _path_problem(program: str, search: str, workdir: Path) -> str | None:
    """None when a bare `program` is found on `search` (a PATH) as execvp finds it; else why
    not, with execvp's error: EACCES when an entry refused this user, else ENOENT."""
    if not search:
        return f"{program!r}: PATH is empty"
    denied: list[str] = []
    for entry in search.split(os.pathsep):
        folder = workdir / (entry or ".")
        candidate = folder / program
        try:
            info = candidate.stat()
        except OSError as exc:
            if exc.errno == errno.EACCES:
                denied.append(f"{folder} is not searchable by this user")
            elif exc.errno not in _NEXT_ENTRY:
                return f"{program!r}: {exc.strerror or exc} ({candidate})"
            continue
        if stat.S_ISREG(info.st_mode) and os.access(candidate, os.X_OK):
            return None
        denied.append(f"{candidate} is not an executable file")
    if denied:
        return f"{program!r}: permission denied ({'; '.join(denied)}), not found elsewhere " \
            f"in PATH ({search})"
    return f"{program!r}: not found in PATH ({search})"


def _program_problem(path: Path, written: str) -> str | None:
    try:
        st = path.stat()
    except FileNotFoundError:
        return f"{written!r}: no such file ({path})"
    except OSError as exc:
        return f"{written!r}: {exc.strerror or exc} ({path})"
    if not stat.S_ISREG(st.st_mode):
        return f"{written!r}: not a file ({path})"
    if not os.access(path, os.X_OK):
        return f"{written!r}: not executable, no execute bit ({path}): chmod +x it"
    return None


def _cwd_problem(cwd: Path) -> str | None:
    return None if cwd.is_dir() else f"cwd {str(cwd)!r} is not a folder"


def problems(registry: Registry) -> list[str]:
    """One line per registry command that cannot start here (kinds, the agents' tools' folders
    and the alert command)."""
    folder = registry.path.resolve().parent
    found = []
    for name, kind in sorted(registry.kinds.items()):
        if kind.steps:  # a chain: each step starts by itself
            for step in kind.steps:
                problem = resolve(step.command, folder, step.cwd or kind.cwd,
                                  {**kind.env, **step.env}).problem
                if problem:
                    found.append(f"{registry.path}: kind {name!r}, step {step.name!r}: command "
                                 f"cannot start: {problem}")
            continue
        problem = resolve(kind.command, folder, kind.cwd, kind.env).problem
        if problem:
            found.append(f"{registry.path}: kind {name!r}: command cannot start: {problem}")
    tools = registry.agents.tools if registry.agents is not None else {}
    for name, tool in sorted(tools.items()):
        # A tool's argv is run as written (tickq.agents.runner), in its cwd: that folder.
        problem = _cwd_problem(tool.cwd) if tool.cwd is not None else None
        if problem:
            found.append(f"{registry.path}: agents.tools.{name}: command cannot start: {problem}")
    alert = registry.settings.alert_command
    if alert:
        problem = resolve(alert, folder).problem
        if problem:
            found.append(f"{registry.path}: alert_command cannot start: {problem}")
    return found
