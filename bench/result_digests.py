"""The digest of every kind's result of `check`, `simulate --hours 744` and `check --suggest`, per
registry, at fixed instants: what a change to the simulation must leave as it is. Run it with
this checkout and with another (`--against DIR`, e.g. a `git archive` of an older commit, run
with its own tickq in a process of its own) and compare the lines.

    .venv/bin/python bench/result_digests.py [--at ISO ...] [--against DIR] [REGISTRY ...]

Default registries: every example (`examples/**/*.toml` with kinds) and the crontab-shaped ones
of the tests (`tests_py/data/crontab/`). `check` is simulated at each `--at` (default: two
instants, one before a month end of 28 days and one before a clock change of Europe/London),
window after window in one scratch database (what `tickq check` gives, beside or not);
`simulate` replays 744 hours from the same instant; `--suggest` runs at the machine's now (its
windows are the day's), only for the registries whose check starves.

A digest is of a canonical form (times in UTC, intervals in seconds), so two checkouts compare
whatever their classes' reprs.
"""

from __future__ import annotations

import sys

sys.dont_write_bytecode = True

import dataclasses  # noqa: E402
import datetime as dt  # noqa: E402
import hashlib  # noqa: E402
import json  # noqa: E402
import time  # noqa: E402
from decimal import Decimal  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import _common as c  # noqa: E402
import crontabs  # noqa: E402

AT = ("2027-02-24T09:00:00+00:00", "2027-03-20T09:00:00+00:00")


def canonical(value: Any) -> Any:
    """A JSON-able form of a result whatever its classes: times in UTC, intervals in seconds."""
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


def check_at(server: str, registry: Any, at: dt.datetime) -> Any:
    """`tickq check`'s worst case with the clock at `at`: its windows, one after the other."""
    from tickq.check import simulate
    from tickq.db.api import check as api

    with api.scratch(server) as conn:
        api.load(conn, registry, now=at)
        planned = [api.Window(*row) for row in conn.execute(
            "SELECT starts_at, hours, period, warm_up, dst_zone, month_end"
            " FROM tickq.simulation_windows(%s)", (at,)).fetchall()]
        worst = None
        for number, window in enumerate(planned, 1):
            api.simulate_window(conn, window, None, steady=True)
            worst = api.merge(conn, worst, number, window)
        return simulate.WorstCase(planned, api.worst_waits(conn, worst))


def measure(server: str, path: Path, instants: list[dt.datetime], suggest: bool) -> list[str]:
    from tickq.check import simulate
    from tickq.registry import load_registry

    registry = load_registry(path)
    lines = []
    for at in instants:
        started = time.perf_counter()
        checked = check_at(server, registry, at)
        lines.append(f"{path.name} check {at:%Y-%m-%dT%H:%M} {digest(checked)}"
                     f" starved={len(checked.starved)} ({time.perf_counter() - started:.1f} s)")
        started = time.perf_counter()
        replayed = simulate.replay(server, registry, 744, None, at=at)
        lines.append(f"{path.name} simulate744 {at:%Y-%m-%dT%H:%M} {digest(replayed)}"
                     f" starved={len(replayed.starved)} ({time.perf_counter() - started:.1f} s)")
    if suggest:
        from tickq.check import suggest as suggesting

        started = time.perf_counter()
        with simulate.scratch(server) as sims:
            result = simulate.evaluate(sims, registry, None)
            if result.starved:
                found = suggesting.suggest(sims, registry, None, result)
                lines.append(f"{path.name} suggest now {digest(found)} {canonical(found)}"
                             f" ({time.perf_counter() - started:.1f} s)")
    return lines


def registries() -> list[Path]:
    from tickq.registry import load_registry

    found = []
    for path in sorted((c.REPO / "examples").rglob("*.toml")):
        try:
            if load_registry(path).kinds:
                found.append(path)
        except Exception:  # noqa: BLE001 (not a registry: skipped)
            continue
    return found + crontabs.test_registries()


def main() -> None:
    p = c.parser(__doc__.splitlines()[0])
    p.add_argument("--at", action="append", help="an instant for check and simulate (ISO 8601)")
    p.add_argument("--against", type=Path, metavar="DIR", help="run that checkout's tickq instead")
    p.add_argument("--no-suggest", action="store_true", help="leave --suggest out")
    p.add_argument("registry", nargs="*", type=Path)
    args = p.parse_args()
    c.run_against(args.against, __file__)
    instants = [dt.datetime.fromisoformat(a) for a in (args.at or AT)]
    with c.server(args.database_url) as server, c.fresh_database(server, "digests") as url:
        paths = args.registry or registries()
        from tickq import db

        with db.connect(url) as conn:
            print(c.server_info(conn), flush=True)
        for path in paths:
            try:
                for line in measure(url, path, instants, not args.no_suggest):
                    print(line, flush=True)
            except Exception as exc:  # noqa: BLE001 (said, and on to the next registry)
                print(f"{path.name} FAILED {type(exc).__name__}: {str(exc).splitlines()[0]}",
                      flush=True)


if __name__ == "__main__":
    main()
