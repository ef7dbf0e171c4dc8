"""What a data folder's postmaster.pid says of the server running on it: the one reader of
that file (the embedded server's start and stop, `tickq server status|stop`).

PostgreSQL writes the file's lines in this order (src/include/utils/pidfile.h): the pid, the
data folder, the start time (seconds since the epoch), the port, the first socket folder (empty
without one), the first listen address, the shared memory key, and the status ("starting",
"stopping", "ready", "standby"; a server before 10 writes none)."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path
from typing import NamedTuple


class Postmaster(NamedTuple):
    pid: int
    started: datetime | None
    port: str  # "" when the file does not say
    socket_dir: str  # "" when the server has no socket (or the file does not say)
    status: str  # "" when the file does not say

    @property
    def ready(self) -> bool:
        """Accepting connections: not starting or stopping (no status counts as ready: a server
        that writes none is up)."""
        return self.status in ("ready", "")


def read(pgdata: Path) -> Postmaster | None:
    """The server running on `pgdata`, or None: no pid file, one that cannot be read, or one
    whose process is gone (a stale file left by a crash)."""
    try:
        lines = (pgdata / "postmaster.pid").read_text().splitlines()
        pid = int(lines[0])
    except (OSError, ValueError, IndexError):
        return None
    if not _alive(pid):
        return None

    def line(n: int) -> str:
        return lines[n].strip() if len(lines) > n else ""

    started = datetime.fromtimestamp(int(line(2)), UTC) if line(2).isdigit() else None
    return Postmaster(pid, started, line(3), line(4), line(7))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # alive, the server's own user's (seen by a caller that is not root)
    return True
