"""The simulation gives the answer it gave before it learnt to skip what it need not simulate (a
stretch where nothing is due or running, a stretch whose state and slots repeat a day or a week
before, copied), kind for kind: every example registry and the crontab-shaped registries of
tests_py/data/crontab/ (a one-minute tick, minute lists, nightly, weekly and monthly lines, a
zone with clock changes, a registry that starves, 100 generated cron kinds).

The digests were recorded with the commit before that work (5ef5668), by
`bench/result_digests.py --against` a `git archive` of it, on the same embedded PostgreSQL 18:
each `check` window after window in one scratch database with the clock at a fixed instant, and
`simulate --hours 744` from it. A digest covers the windows and each kind's runs, longest wait,
starved, when it began, what it waited behind and in which window (times in UTC, intervals in
seconds). examples/orchestrator/registry.toml is not among them: its check stopped with "all 3
slots are in use" there (below).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from tickq.check import simulate
from tickq.db.api import check as api
from tickq.registry import load_registry

REPO = Path(__file__).resolve().parent.parent
AT = dt.datetime(2027, 2, 24, 9, tzinfo=dt.UTC)  # before February's end and London's spring change
LATER = dt.datetime(2027, 3, 20, 9, tzinfo=dt.UTC)

CHECKS = {  # registry, instant: digest of `check`'s worst case at 5ef5668
    ("examples/crontab/registry.toml", AT): "6c9377478e09",
    ("examples/crontab/registry.toml", LATER): "39f4d8aaa9e3",
    ("examples/demo/registry.toml", AT): "d4e9e53df865",
    ("examples/starvation/burst.toml", AT): "5e1ce8cad0b1",
    ("examples/starvation/burst_fixed.toml", AT): "3fccd9f9e2c3",
    ("examples/starvation/first_fix.toml", AT): "b4a0187c050f",
    ("examples/starvation/original.toml", AT): "fe47e650eae2",
    ("examples/starvation/real_fix.toml", AT): "ade19cfd43b2",
    ("examples/starvation/real_fix.toml", LATER): "ade19cfd43b2",
    ("tests_py/data/crontab/crontab_berlin.toml", AT): "1e5bdc05df0a",
}
REPLAYS = {  # registry, instant: digest of `simulate --hours 744` at 5ef5668
    ("examples/crontab/registry.toml", AT): "69881ffc6ab8",
    ("examples/starvation/real_fix.toml", LATER): "74b4b33d7b41",
    ("examples/starvation/burst_fixed.toml", AT): "121056354111",
    ("tests_py/data/crontab/crontab_crowded.toml", AT): "660ad92d0ae2",
    ("tests_py/data/crontab/crons_100.toml", AT): "5da62a41da42",
}


def canonical(value: Any) -> Any:
    """A JSON-able form of a result: times in UTC, intervals in seconds (as
    bench/result_digests.py's)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: canonical(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {str(k): canonical(v) for k, v in sorted(value.items())}
    if isinstance(value, (list, tuple)):
        return [canonical(v) for v in value]
    if isinstance(value, dt.datetime):
        return value.astimezone(dt.UTC).isoformat()
    if isinstance(value, dt.timedelta):
        return value.total_seconds()
    if isinstance(value, (dt.date, Decimal)):
        return str(value)
    return value


def digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(canonical(value), sort_keys=True).encode()).hexdigest()[:12]


def check_at(server: str, path: Path, at: dt.datetime) -> simulate.WorstCase:
    """`tickq check`'s worst case of `path` with the clock at `at`, window after window."""
    registry = load_registry(path)
    with api.scratch(server) as conn:
        api.load(conn, registry, now=at)
        planned = api.windows(conn, now=at)
        worst = None
        for number, window in enumerate(planned, 1):
            api.simulate_window(conn, window, None, steady=True)
            worst = api.merge(conn, worst, number, window)
        return simulate.WorstCase(planned, api.worst_waits(conn, worst))


@pytest.mark.parametrize(("name", "at"), sorted(CHECKS), ids=lambda x: str(x).split(" ")[0])
def test_check_gives_the_answer_it_gave(pg_server_url: str, name: str, at: dt.datetime) -> None:
    result = check_at(pg_server_url, REPO / name, at)
    assert any(k.runs for k in result.kinds)
    assert digest(result) == CHECKS[name, at]


@pytest.mark.parametrize(("name", "at"), sorted(REPLAYS), ids=lambda x: str(x).split(" ")[0])
def test_simulate_gives_the_answer_it_gave(pg_server_url: str, name: str, at: dt.datetime) -> None:
    result = simulate.replay(pg_server_url, load_registry(REPO / name), 744, None, at=at)
    assert result.windows[0].hours == 744
    assert digest(result) == REPLAYS[name, at]


def test_an_irreversible_kind_is_armed_once_and_then_runs(pg_server_url: str) -> None:
    # A window opens before the instant the registry was synced, which the arming run's kind
    # took as its command's: the manual run that arms it counted for nothing, so the kind never
    # ran in the simulation and was "armed" again at every part, which failed ("all 3 slots are
    # in use") the first time the slots were full there.
    result = check_at(pg_server_url, REPO / "examples" / "orchestrator" / "registry.toml", AT)
    runs = {k.kind: k.runs for k in result.kinds}
    assert runs["payout_run"] > 0 and runs["email_blast"] > 0, runs
