"""The worst-case windows simulated beside each other, in scratch databases of their own, give
exactly what simulating them one after the other in one database gives: every kind's runs,
longest wait, starved, when the wait began, what it waited behind, in which window.

A window cut into stretches goes on in the next database from simulation_start at the cut; the
stretch before it moves on until both stood at rest at the same instant (a queue that never
rests makes it run to the window's end). A later share's database is armed as the first window
arms (irreversible kinds). Windows are cut inside only when there are more databases than
windows (and `cut`: a check does not, bench/README.md), and never when kinds skip slots past a
catch_up. Real scratch databases on the test
server, the real claim and report SQL.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tickq.check import simulate
from tickq.check.simulate import Stretch, WorstCase, evaluate
from tickq.db.api import check as api
from tickq.registry import Registry, load_registry

REPO = Path(__file__).resolve().parent.parent

# Calendar times in London (two clock-change windows), an irreversible kind (armed by a manual
# run at the first window's start), a heavy pooled kind and a pooled one beside it.
MIXED = """
[settings]
slots = 3
tick = "5m"
stale_after = "15m"
housekeeping_every = "1h"

[pools.api]
slots = 1

[kinds.deploy]
command = ["true"]
every = "1h"
timeout = "10m"
irreversible = true
priority = "high"

[kinds.heavy]
command = ["true"]
every = "30m"
timeout = "12m"
weight = 2
pools = ["api"]

[kinds.pooled]
command = ["true"]
every = "15m"
offset = "5m"
timeout = "6m"
pools = ["api"]
priority = "urgent"

[kinds.london]
command = ["true"]
at = ["01:30", "02:30", "09:00"]
timezone = "Europe/London"
timeout = "20m"
priority = "low"
"""

# Two kinds due every 5 minutes, each holding the only slot for 6: always one waits, so the
# queue is never at rest and a stretch cut from the one before never counts.
NEVER_AT_REST = """
[settings]
slots = 1
tick = "5m"
stale_after = "15m"
housekeeping_every = "1d"

[kinds.often]
command = ["true"]
every = "5m"
timeout = "6m"
priority = "high"

[kinds.also]
command = ["true"]
every = "5m"
timeout = "6m"
priority = "low"
"""

CATCH_UP = MIXED + """
[kinds.late]
command = ["true"]
every = "1h"
timeout = "5m"
catch_up = "10m"
priority = "low"
"""


def registry_of(tmp_path: Path, text: str) -> Registry:
    path = tmp_path / "r.toml"
    path.write_text(text)
    return load_registry(path)


def one_after_the_other(server: str, registry: Registry) -> WorstCase:
    with api.scratch(server) as conn:
        return evaluate(conn, registry, None)


def assert_same_beside(server: str, registry: Registry, jobs: int) -> WorstCase:
    """Beside each other with `jobs` databases, then one after the other; the windows start on
    today's date, so a pair that fell either side of midnight is run again."""
    for _ in range(2):
        with simulate.scratch(server, jobs) as sims:
            beside = evaluate(sims, registry, None, jobs=jobs, cut=True)
        alone = one_after_the_other(server, registry)
        if alone.windows == beside.windows:
            break
    assert beside == alone
    assert any(k.runs for k in alone.kinds)
    return alone


@pytest.mark.parametrize("jobs", [2, 3])
def test_real_fix_beside_gives_what_one_after_the_other_gives(
    pg_server_url: str, jobs: int
) -> None:
    """Two databases: a window each; three: the week cut in two."""
    registry = load_registry(REPO / "examples" / "starvation" / "real_fix.toml")
    result = assert_same_beside(pg_server_url, registry, jobs)
    assert len(result.windows) == 2  # a week with a clock change, and the other change


@pytest.mark.parametrize("jobs", [2, 3])
def test_irreversible_pooled_and_heavy_kinds_beside(
    pg_server_url: str, tmp_path: Path, jobs: int
) -> None:
    result = assert_same_beside(pg_server_url, registry_of(tmp_path, MIXED), jobs)
    assert len(result.windows) == 2


def test_a_queue_never_at_rest_runs_the_stretch_before_to_the_windows_end(
    pg_server_url: str, tmp_path: Path
) -> None:
    registry = registry_of(tmp_path, NEVER_AT_REST)
    assert_same_beside(pg_server_url, registry, jobs=3)
    with api.scratch(pg_server_url) as conn:  # never at rest indeed, after its first part
        api.load(conn, registry)
        window = api.windows(conn)[0]
        parts = api.parts(conn, window.starts_at, window.ends_at)
        api.start_steady(conn, window.starts_at)
        rests = []
        for n, part in enumerate(parts[:-1]):
            api.move_part(conn, *part, None)
            rests.append(api.at_rest(conn, parts[n + 1][0]))
    assert len(rests) > 2 * simulate._Beside.PROBE and not any(rests)


def test_kinds_with_a_catch_up_are_cut_between_windows_only(
    pg_server_url: str, tmp_path: Path
) -> None:
    registry = registry_of(tmp_path, CATCH_UP)
    assert_same_beside(pg_server_url, registry, jobs=3)
    with simulate.scratch(pg_server_url, 1) as sims:
        api.load(sims.conn, registry)
        planned = api.windows(sims.conn)
        parts = [api.parts(sims.conn, w.starts_at, w.ends_at) for w in planned]
        cut = simulate._Beside(sims, registry, (), None, planned, parts).shares(3)
    assert len(planned) == 2
    assert all(s.begin == 0 and s.end == len(parts[s.number - 1]) for share in cut for s in share)


def test_a_second_registry_in_the_same_databases_is_the_second_registrys(
    pg_server_url: str, tmp_path: Path
) -> None:
    """`check --suggest` simulates proposal after proposal in the check's scratch databases:
    each copy beside the first is synced to the proposal, not left at the check's registry."""
    first = registry_of(tmp_path, MIXED)
    second = registry_of(tmp_path, MIXED.replace("slots = 3", "slots = 2", 1))
    for _ in range(2):
        with simulate.scratch(pg_server_url, 2) as sims:
            evaluate(sims, first, None, jobs=2)
            beside = evaluate(sims, second, None, jobs=2)
        alone = one_after_the_other(pg_server_url, second)
        if alone.windows == beside.windows:
            break
    assert beside == alone
    assert beside != one_after_the_other(pg_server_url, first)


def test_the_parts_of_the_windows_are_cut_into_shares_of_about_as_many_parts(
    pg_server_url: str,
) -> None:
    registry = load_registry(REPO / "examples" / "starvation" / "real_fix.toml")
    with simulate.scratch(pg_server_url, 1) as sims:
        api.load(sims.conn, registry)
        planned = api.windows(sims.conn)
        parts = [api.parts(sims.conn, w.starts_at, w.ends_at) for w in planned]
        beside = simulate._Beside(sims, registry, (), None, planned, parts)
        sizes = [len(p) for p in parts]
        assert beside.shares(1) == [[Stretch(n, 0, size) for n, size in enumerate(sizes, 1)]]
        # no more databases than windows: whole windows, the week alone
        assert beside.shares(2) == [[Stretch(1, 0, sizes[0])], [Stretch(2, 0, sizes[1])]]
        for jobs in (3, 5):
            shares = beside.shares(jobs)
            assert len(shares) == jobs
            stretches = [s for share in shares for s in share]
            # every part once, in order, each window from its first part
            assert [(s.number, s.begin) for s in stretches] == sorted(
                (s.number, s.begin) for s in stretches)
            for number, size in enumerate(sizes, 1):
                mine = [s for s in stretches if s.number == number]
                assert mine[0].begin == 0 and mine[-1].end == size
                assert all(a.end == b.begin for a, b in zip(mine, mine[1:], strict=False))
            loads = [sum(s.end - s.begin for s in share) for share in shares]
            assert max(loads) - min(loads) <= 1 + len(sizes)
