"""`tickq check` catches bursts, not only averages: the worst case is simulated, offsets spread
cadences, and `--suggest` proposes a fix that the same simulation passes.

examples/starvation/burst.toml: eight hourly kinds in three slots. Their slot share fits the
budget, but all of them are due at :00, so the last ones wait half an hour.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
STORY = REPO / "examples" / "starvation"


def tickq(*args: str, url: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tickq.cli", *args, "--database-url", url],
        capture_output=True, text=True, check=False, timeout=120,
    )


@pytest.mark.xfail(strict=True, reason="check only adds up slot shares: the burst passes")
def test_check_fails_the_burst_that_fits_on_average(db_url: str) -> None:
    done = tickq("check", "--registry", str(STORY / "burst.toml"), url=db_url)
    # the average fits...
    assert "capacity fits: total slot share 2.07 against 2.25" in done.stdout, done.stdout
    # ...but the queue starves at :00, and the check says so
    assert done.returncode == 1, done.stdout + done.stderr
    assert "hourly_7" in done.stdout + done.stderr
