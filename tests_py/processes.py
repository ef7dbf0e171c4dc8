"""Helpers the tests share for looking at real processes."""

from __future__ import annotations

import os
from pathlib import Path


def is_alive(pid: int) -> bool:
    """True while `pid` runs. A zombie counts as gone: pid 1 on these machines never reaps
    orphans, so a killed grandchild can stay a zombie for good."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    except OSError:
        return True  # no /proc: trust kill()
    return stat.rpartition(")")[2].split()[0] not in ("Z", "X")
