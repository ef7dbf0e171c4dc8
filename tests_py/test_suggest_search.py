"""`check --suggest` searches the number of slots spending as few passing simulations as it can
(a count that fails is known at its first stale wait; one that passes is simulated whole) and
finds what the search before it found. Compared here with that search (1, 3, 7, ... more, then
halving the gap), kept below as it was, over the same simulations (each proposal simulated once,
its verdict shared by both), on the example registries that starve and on the crontab-shaped
one that does: the whole suggestion must be the same.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from test_month_end import month_end_kinds
from test_pools_starvation import POOL

from tickq.check import simulate, suggest
from tickq.registry import Registry, load_registry

REPO = Path(__file__).resolve().parent.parent
STARVING = [REPO / "examples" / "starvation" / "original.toml",
            REPO / "examples" / "starvation" / "first_fix.toml",
            REPO / "examples" / "starvation" / "burst.toml",
            REPO / "examples" / "orchestrator" / "registry.toml",
            REPO / "tests_py" / "data" / "crontab" / "crontab_crowded.toml"]
TEXTS = {"month_ends.toml": '[settings]\nslots = 2\nstale_after = "15m"\n' + month_end_kinds(12),
         "pool.toml": POOL.format(slots=1)}  # test_month_end's and test_pools_starvation's


def search_before(conn: simulate.Scratches, registry: Registry,
                  durations: dict[str, float] | None) -> tuple[int | None, int]:
    """suggest.fewest_slots as it was (fbb3fc1): 1, 3, 7, ... more until one passes, then
    halving the gap."""
    low, high = registry.settings.slots, len(registry.kinds) + 1
    if high <= low:
        return None, high
    passed: dict[int, bool] = {}
    step = 1
    while low + step < high:
        passed[low + step] = suggest.passes(conn, suggest.with_slots(registry, low + step),
                                            durations)
        if passed[low + step]:
            high = low + step
            break
        low, step = low + step, step * 2
    while high - low > 1:
        middle = (low + high) // 2
        passed[middle] = suggest.passes(conn, suggest.with_slots(registry, middle), durations)
        if passed[middle]:
            high = middle
        else:
            low = middle
    if high not in passed:
        passed[high] = suggest.passes(conn, suggest.with_slots(registry, high), durations)
    return (high if passed[high] else None), high


@pytest.fixture
def sims(pg_server_url: str) -> Iterator[simulate.Scratches]:
    """Scratch databases of a check's own, put back after the test (as after each check)."""
    with simulate.scratch(pg_server_url) as made:
        yield made


class Verdicts:
    """suggest.passes, each proposal simulated once; the slot counts asked, in order."""

    def __init__(self, registry: Registry) -> None:
        self.registry, self.known, self.asked = registry, {}, []  # type: ignore[var-annotated]
        self.passes = suggest.passes

    def __call__(self, conn: simulate.Scratches, proposal: Registry,
                 durations: dict[str, float] | None) -> bool:
        if proposal == suggest.with_slots(self.registry, proposal.settings.slots):
            self.asked.append(proposal.settings.slots)
        key = repr(proposal)
        if key not in self.known:
            self.known[key] = self.passes(conn, proposal, durations)
        return bool(self.known[key])

    def passing(self, counts: list[int]) -> list[int]:
        return [n for n in counts
                if self.known[repr(suggest.with_slots(self.registry, n))]]


@pytest.mark.parametrize("path", [*STARVING, *map(Path, TEXTS)],
                         ids=lambda p: f"{p.parent.name}/{p.name}".lstrip("./"))
def test_the_suggestion_is_the_one_the_search_before_found(
    sims: simulate.Scratches, path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if path.name in TEXTS:
        path = tmp_path / path.name
        path.write_text(TEXTS[path.name])
    registry = load_registry(path)
    checked = simulate.evaluate(sims, registry, None)
    assert checked.starved, path
    verdicts = Verdicts(registry)
    monkeypatch.setattr(suggest, "passes", verdicts)
    found = suggest.suggest(sims, registry, None, checked)
    now_asked, verdicts.asked = verdicts.asked, []
    monkeypatch.setattr(suggest, "fewest_slots", search_before)
    before = suggest.suggest(sims, registry, None, checked)
    assert found == before
    # each passing count is a whole worst case: an answer up to 8 more is found with two at most
    if found.slots is not None and found.slots <= registry.settings.slots + 8:
        assert len(verdicts.passing(now_asked)) <= 2, (now_asked, verdicts.asked)
    if path.name == "original.toml":  # the story's: 3 fails, 4 passes; 5 is not simulated
        assert (now_asked, verdicts.asked) == ([3, 4], [3, 5, 4]), (now_asked, verdicts.asked)


MONTH_ENDS = '[settings]\nslots = 2\nstale_after = "15m"\n' + "".join(
    f'\n[kinds.close_{i:02d}]\ncommand = ["true"]\nat = "00:00"\ndays = [-1]\ntimeout = "10m"\n'
    for i in range(6))


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_proposal_fails_at_its_first_window_with_a_stale_wait(
    sims: simulate.Scratches, tmp_path: Path, jobs: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Six month-end kinds in two slots starve at every month end: each window holds one. The
    proposal's verdict is known at the first window that shows a stale wait, so the windows
    after it (one database) or beside it not yet begun (each share of `jobs`) are left; the
    verdict is the whole worst case's."""
    path = tmp_path / "registry.toml"
    path.write_text(MONTH_ENDS)
    registry = load_registry(path)
    whole = simulate.evaluate(sims, registry, None, jobs=jobs)
    assert len(whole.windows) >= 3 and whole.starved
    began: list[object] = []
    simulate_window = simulate.api.simulate_window

    def counted(conn, window, *args, **kwargs):  # type: ignore[no-untyped-def]
        began.append(window)
        return simulate_window(conn, window, *args, **kwargs)

    monkeypatch.setattr(simulate.api, "simulate_window", counted)
    fails = simulate.evaluate(sims, registry, None, jobs=jobs, stop_stale=True)
    assert simulate.stale_wait(fails.kinds, registry.settings.stale_after)
    assert 1 <= len(began) <= jobs < len(whole.windows), began  # a share stops at its first
    assert not suggest.passes(sims, registry, None)
    assert suggest.passes(sims, suggest.with_slots(registry, 6), None)


def test_a_registry_checked_again_in_the_same_databases_takes_as_many_run_ids(
    sims: simulate.Scratches, tmp_path: Path
) -> None:
    """`check --suggest` evaluates proposal after proposal in the same scratch databases, each
    window after the first in a database that simulated before: its runs take as many ids as in
    a fresh one (the copies' ids counted from the sequence: tests_sql/122). Counted from the
    last run left, every evaluation of these month ends took about 31 times the ids of the one
    before, until a copy's ids went past bigint."""
    path = tmp_path / "registry.toml"
    path.write_text(MONTH_ENDS)
    registry = load_registry(path)
    taken = []
    for _ in range(2):
        before = next_run_id(sims.conn)
        simulate.evaluate(sims, registry, None, jobs=1)
        taken.append(next_run_id(sims.conn) - before)
    assert taken[0] > 0 and taken[1] == taken[0], taken


def next_run_id(conn: psycopg.Connection) -> int:
    row = conn.execute("SELECT CASE WHEN is_called THEN last_value + 1 ELSE last_value END"
                       " FROM tickq.job_run_id_seq").fetchone()
    assert row is not None
    return int(row[0])
