"""Helpers the tests share for starting and looking at real processes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
# Variables of the developer's shell that would change what a tickq command does.
OUTSIDE = ("DATABASE_URL", "TICKQ_REGISTRY", "TICKQ_LOG_FORMAT", "COLUMNS")


def tickq_env(**extra: str) -> dict[str, str]:
    """This environment without OUTSIDE, with this checkout's runner first on PYTHONPATH."""
    env = {k: v for k, v in os.environ.items() if k not in OUTSIDE}
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(REPO / "python_runner"), os.environ.get("PYTHONPATH")) if p)
    return env | extra


def tickq(*args: str, timeout: float = 120, **kw: Any) -> subprocess.CompletedProcess[str]:
    """`python -m tickq.cli ARGS` as a person runs it, its output captured as text; `kw` goes
    to subprocess.run (cwd, input, env: tickq_env() unless given)."""
    kw.setdefault("env", tickq_env())
    return subprocess.run([sys.executable, "-m", "tickq.cli", *args], capture_output=True,
                          text=True, timeout=timeout, **kw)


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
