"""What one sync left in a scratch database, copied into another (tickq.scratch_state and
tickq.scratch_restore, template-only functions of queries/scratch_seed.sql): `check` syncs its
registry into the first scratch database (and, at the same time, into the one the capacity is
judged in), and copies that into the database beside it instead of syncing (and validating) it
again.
The copy must hold exactly what the sync left, table for table, so that a check gives what
syncing each database gives.

Real scratch databases on the test server (tests_py/conftest.py), the real sync.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from scratch_pool_state import TIMEOUTS, contents
from test_simulate_beside import MIXED, one_after_the_other, registry_of

from tickq.check import simulate
from tickq.db import scratch
from tickq.db.api import check as api
from tickq.db.api.scratches import restore, state

# MIXED (a pool, a weight, an irreversible kind, calendar times in London) with agents' caps, a
# cron string and a kind that is not enabled: every table a sync writes.
EVERY_TABLE = MIXED + """
[agents]
base_url = "http://127.0.0.1:9/v1"
model = "m"
max_turns = 3
priority = "low"

[kinds.monthly]
command = ["true"]
cron = "15 3 1,15 * *"
timeout = "5m"

[kinds.off]
command = ["true"]
every = "1h"
timeout = "1m"
enabled = false
"""


def test_a_sync_copied_holds_what_the_sync_left(pg_server_url: str, tmp_path: Path) -> None:
    registry = registry_of(tmp_path, EVERY_TABLE)
    (tmp_path / "other").mkdir()
    other = registry_of(tmp_path / "other", MIXED)
    with scratch.scratch(pg_server_url, TIMEOUTS) as first, \
            scratch.scratch(pg_server_url, TIMEOUTS) as copy:
        api.load(first, registry)
        held = state(first)
        synced = contents(first)
        assert "tickq.job_kind" in held and "tickq.pool" in held  # what the sync wrote
        restore(copy, held)
        assert contents(copy) == synced
        # into a database that simulated another registry's week: the same
        api.load(copy, other)
        api.simulate_window(copy, api.windows(copy)[0], None, steady=True)
        restore(copy, held)
        assert contents(copy) == synced
        # and a sync of the same registry finds nothing to do there (its digest was copied)
        assert api.load(copy, registry) is None and contents(copy) == synced


@pytest.mark.parametrize("aside", [True, False])
def test_a_check_that_syncs_once_gives_what_syncing_each_database_gives(
    pg_server_url: str, tmp_path: Path, aside: bool
) -> None:
    """`tickq check`'s path: the registry preloaded into the first database and the one aside
    (the capacity), and copied from that one into the one beside the first; without one aside,
    copied from the first."""
    registry = registry_of(tmp_path, EVERY_TABLE)
    for _ in range(2):  # the windows start on today's date: a pair either side of midnight
        with simulate.scratch(pg_server_url, 2, aside=aside) as sims:
            sims.preload(registry)
            assert sims.preloaded(registry)
            capacity = api.capacity(sims.aside_synced(registry), registry) if aside else None
            beside = simulate.evaluate(sims, registry, None, jobs=2)
        alone = one_after_the_other(pg_server_url, registry)
        if alone.windows == beside.windows:
            break
    assert beside == alone and len(alone.windows) > 2  # month ends: windows beside
    if aside:
        with api.scratch(pg_server_url) as conn:
            assert capacity == api.capacity(conn, registry)
