"""Keep this process's secrets (the database password, the model's API key) from the commands
it runs, which run as the same user and could otherwise read them through /proc.

A command never inherits them (host/process.py hands it a short list of variables), but
/proc/PID/environ shows the environment a process was started with, whatever it did to its
environment since: a command reading /proc/$PPID/environ would get its dispatcher's
DATABASE_URL. On Linux, two things close that:

- the values of the named variables are wiped in place in that original block (the bytes
  /proc/PID/environ reads), and set again in the C environment, on the heap, where libpq and
  this process's own children still find them. The name stays, with an empty value. This holds
  against any reader, root included.
- the process is made non-dumpable (prctl(PR_SET_DUMPABLE, 0)): another process of the same
  user can no longer read its /proc/PID/environ, /proc/PID/mem or attach to it. Root (or a
  process with CAP_SYS_PTRACE) still can: a command run as root can read anything of a
  dispatcher run as root, and tickq cannot keep a secret from it (docs/explanation/security.md).

A password typed on the command line (`--database-url postgresql://u:PASSWORD@...`) is in the
block /proc/PID/cmdline reads, which every user of the machine may read (ps shows it): its
bytes are overwritten there with `*` once tickq starts (Python keeps its own copy of the
arguments). Until then, for the few milliseconds of the interpreter's start, it is visible:
DATABASE_URL or a passfile keep it out of the process list altogether
(docs/explanation/security.md).

Elsewhere (macOS: no /proc; another user's environment is not shown by ps) nothing is done.
The blocks are found from /proc/self/stat (arg_start, arg_end, env_start, env_end), not guessed.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import sys
from collections.abc import Iterable
from pathlib import Path

_PR_SET_DUMPABLE = 4  # linux/prctl.h
# Fields of /proc/PID/stat after "pid (comm)": the state is the first; arg_start, arg_end,
# env_start and env_end are fields 48 to 51 of proc(5), so 45 to 48 here.
_ARG_START, _ARG_END, _ENV_START, _ENV_END = 45, 46, 47, 48


def keep_private(names: Iterable[str | None], in_arguments: Iterable[str] = ()) -> list[str]:
    """Make this process non-dumpable, wipe the values of `names` from the environment
    block /proc shows (keeping them in os.environ and the C environment) and each string of
    `in_arguments` from its command line; return the names wiped. Does nothing, and returns
    [], where this is not Linux."""
    if not sys.platform.startswith("linux"):
        return []
    make_undumpable()
    hide_in_arguments(in_arguments)
    return wipe_environment_block({n for n in names if n})


def _block(start_field: int, end_field: int) -> tuple[int, int] | None:
    """The (start, end) addresses of a block of this process's memory /proc/self/stat names."""
    try:
        fields = Path("/proc/self/stat").read_text().rpartition(")")[2].split()
        start, end = int(fields[start_field]), int(fields[end_field])
    except (OSError, ValueError, IndexError):
        return None
    return (start, end) if 0 < start < end else None


def hide_in_arguments(secrets: Iterable[str]) -> int:
    """Overwrite with `*` every occurrence of each of `secrets` in the command line block
    /proc/PID/cmdline reads; return how many were hidden. sys.argv, a copy, keeps them."""
    wanted = {s.encode("utf-8", "surrogateescape") for s in secrets if s}
    where = _block(_ARG_START, _ARG_END) if wanted else None
    if where is None:
        return 0
    start, end = where
    block = ctypes.string_at(start, end - start)
    hidden = 0
    for secret in wanted:
        at = block.find(secret)
        while at >= 0:
            ctypes.memset(start + at, ord("*"), len(secret))
            hidden += 1
            at = block.find(secret, at + len(secret))
    return hidden


def make_undumpable() -> bool:
    """prctl(PR_SET_DUMPABLE, 0); True when done. A command this process starts is dumpable
    again (exec resets it), so its own tree stays readable to it."""
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0) == 0
    return False


def wipe_environment_block(names: set[str]) -> list[str]:
    """Overwrite with NULs the value of each of `names` in the block the process started with;
    each still in os.environ is set again in the C environment (a copy on the heap)."""
    where = _block(_ENV_START, _ENV_END) if names else None
    if where is None:
        return []
    start, end = where
    block = ctypes.string_at(start, end - start)
    wiped = []
    offset = 0
    for entry in block.split(b"\0"):
        name, equals, value = entry.partition(b"=")
        text = name.decode("utf-8", "surrogateescape")
        if equals and value and text in names:
            ctypes.memset(start + offset + len(name) + 1, 0, len(value))
            wiped.append(text)
        offset += len(entry) + 1
    for name in wiped:
        if name in os.environ:
            # setenv: the C environment's entry now points at a copy, not at the wiped bytes.
            os.putenv(name, os.environ[name])
    return wiped
