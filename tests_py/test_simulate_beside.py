"""The worst-case windows simulated beside each other, in scratch databases of their own, give
exactly what simulating them one after the other in one database gives: every kind's runs,
longest wait, starved, when the wait began, what it waited behind, in which window.

Each database simulates whole windows (never more shares than windows); a later share's
database is armed as the first window arms (irreversible kinds). Real scratch databases on the
test server, the real claim and report SQL.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from decimal import Decimal
from pathlib import Path

import pytest

from tickq.check import simulate
from tickq.check.simulate import WorstCase, evaluate
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
# queue is never at rest (nothing of a window is copied from the day before).
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
            beside = evaluate(sims, registry, None, jobs=jobs)
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
    """Two databases or three: a window each."""
    registry = load_registry(REPO / "examples" / "starvation" / "real_fix.toml")
    result = assert_same_beside(pg_server_url, registry, jobs)
    assert len(result.windows) == 2  # a week with a clock change, and the other change


@pytest.mark.parametrize("jobs", [2, 3])
def test_irreversible_pooled_and_heavy_kinds_beside(
    pg_server_url: str, tmp_path: Path, jobs: int
) -> None:
    result = assert_same_beside(pg_server_url, registry_of(tmp_path, MIXED), jobs)
    assert len(result.windows) == 2


def test_a_queue_never_at_rest_beside(pg_server_url: str, tmp_path: Path) -> None:
    assert_same_beside(pg_server_url, registry_of(tmp_path, NEVER_AT_REST), jobs=3)


def test_kinds_with_a_catch_up_beside(pg_server_url: str, tmp_path: Path) -> None:
    result = assert_same_beside(pg_server_url, registry_of(tmp_path, CATCH_UP), jobs=3)
    assert len(result.windows) == 2


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


def test_the_windows_are_shared_whole_in_order_by_their_length(
    pg_server_url: str, tmp_path: Path
) -> None:
    registry = registry_of(tmp_path, MIXED)
    with simulate.scratch(pg_server_url, 1) as sims:
        api.load(sims.conn, registry)
        planned = api.windows(sims.conn)
    assert len(planned) == 2

    def shares(hours: list[int], jobs: int) -> list[list[int]]:
        windows = [dataclasses.replace(planned[0], hours=Decimal(h)) for h in hours]
        return simulate._Beside(sims, registry, (), None, windows).shares(jobs)

    assert shares([168, 48], 1) == [[1, 2]]
    assert shares([168, 48], 2) == shares([168, 48], 5) == [[1], [2]]
    assert shares([168, 48, 24], 2) == shares([168, 48, 24], 3) == [[1], [2, 3]]
    assert shares([24, 24, 24, 24], 2) == [[1, 2], [3, 4]]
    assert shares([24, 24, 24, 24], 4) == [[1], [2], [3], [4]]



# A command of its own each run (TMP): a new command is armed again, whatever a scratch database
# kept from an earlier check.
IRREVERSIBLE = NEVER_AT_REST + """
[kinds.deploy]
command = ["true", "TMP"]
every = "1h"
timeout = "5m"
irreversible = true
"""


@pytest.mark.parametrize(("text", "simulated_days"), [(NEVER_AT_REST, [0, 2]),
                                                       (IRREVERSIBLE, [0, 1, 2])])
def test_a_window_that_repeats_one_simulated_before_it_is_not_simulated_again(
    pg_server_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str,
    simulated_days: list[int],
) -> None:
    """Month ends a quarter of a year apart come again slot for slot: a window whose kinds' slots
    repeat those of one simulated before it in the same database takes that one's report,
    shifted (tickq.simulation_window_repeats, simulation_merge_repeat), and gives what
    simulating it gives. Four windows of six hours, days 0 and 1 in one database, days 2 and 9
    in the other (every cadence repeats daily): two are simulated. With an irreversible kind,
    day 1 is simulated too (day 0 arms it, a manual run day 1 has not); the other database was
    armed at day 0's start, before both of its windows."""
    registry = registry_of(tmp_path, text.replace("TMP", str(tmp_path)))
    real = api.simulate_window
    simulated: list[api.Window] = []

    def counted(conn: api.Connection, window: api.Window, *args: object, **kwargs: object) -> None:
        simulated.append(window)
        real(conn, window, *args, **kwargs)  # type: ignore[arg-type]

    with simulate.scratch(pg_server_url, 2) as sims:
        api.load(sims.conn, registry)
        sims.first_load = (registry, ())
        first = api.windows(sims.conn)[0]
        windows = [dataclasses.replace(first, hours=Decimal(6),
                                       starts_at=first.starts_at + dt.timedelta(days=d))
                   for d in (0, 1, 2, 9)]
        monkeypatch.setattr(api, "simulate_window", counted)
        worst = simulate._Beside(sims, registry, (), None, windows).run(2)
        beside = api.worst_waits(sims.conn, worst)
    monkeypatch.undo()
    with api.scratch(pg_server_url) as conn:
        api.load(conn, registry)
        worst = None
        for number, window in enumerate(windows, 1):
            api.simulate_window(conn, window, None, steady=True)
            worst = api.merge(conn, worst, number, window)
        alone = api.worst_waits(conn, worst)
    # sorted: the two databases' threads simulate in whatever order the cores give them
    assert sorted(w.starts_at for w in simulated) == [
        windows[0].starts_at + dt.timedelta(days=d) for d in simulated_days]
    assert beside == alone
    assert any(k.worst_due_at for k in alone)  # the waits' beginnings were shifted
