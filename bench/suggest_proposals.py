"""Where `tickq check --suggest` spends its time: each proposal's worst case timed, per registry.

    .venv/bin/python bench/suggest_proposals.py [--against DIR] [REGISTRY ...]

Default registries: examples/starvation/original.toml and the crowded crontab of the tests
(tests_py/data/crontab/crontab_crowded.toml). For each, in the scratch databases of a throwaway
server: the check's own worst case (as `tickq check` simulates it, beside), then the suggestion
with every proposal's `simulate.evaluate` timed, in order, each with what it changes and its
verdict, the time outside them (the spread of offsets and times, the registry synced), and the
suggestion itself (compare it between two checkouts). `--against DIR` runs DIR's tickq (e.g. a
`git archive` of an older commit) in a process of its own, with this script.
"""

from __future__ import annotations

import sys

sys.dont_write_bytecode = True

import json  # noqa: E402
import os  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import _common as c  # noqa: E402
import result_digests  # noqa: E402

DEFAULT = [c.REPO / "examples" / "starvation" / "original.toml",
           c.REPO / "tests_py" / "data" / "crontab" / "crontab_crowded.toml"]


def changed(registry: Any, proposal: Any) -> str:
    """What a proposal changes: settings, kinds or pools, briefly."""
    said = [f"{f} {getattr(proposal.settings, f)}" for f in proposal.settings._fields
            if getattr(proposal.settings, f) != getattr(registry.settings, f)]
    kinds = [n for n in proposal.kinds if proposal.kinds[n] != registry.kinds.get(n)]
    if kinds:
        said.append(f"{len(kinds)} kinds")
    if proposal.pools != registry.pools:
        said.append(f"pools {dict(proposal.pools)}")
    return ", ".join(said) or "nothing"


def measure(server: str, path: Path) -> None:
    from tickq.check import simulate, suggest
    from tickq.registry import load_registry

    registry = load_registry(path)
    evaluate = simulate.evaluate
    spent: list[float] = []

    def timed(conn: Any, proposal: Any, *args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        result = evaluate(conn, proposal, *args, **kwargs)
        spent.append(time.perf_counter() - started)
        rule = getattr(simulate, "stale_wait", None)  # (a checkout before it: starved or not)
        fails = (rule(result.kinds, proposal.settings.stale_after) if rule
                 else bool(result.starved))
        print(f"  {changed(registry, proposal)}: {'fails' if fails else 'passes'}"
              f" {spent[-1]:.2f} s", flush=True)
        return result

    with simulate.scratch(server) as sims:
        started = time.perf_counter()
        checked = evaluate(sims, registry, None)
        print(f"{path.name}: the check's own worst case {time.perf_counter() - started:.2f} s,"
              f" {len(checked.starved)} starved", flush=True)
        if not checked.starved:
            return
        simulate.evaluate = timed  # type: ignore[assignment]
        try:
            started = time.perf_counter()
            found = suggest.suggest(sims, registry, None, checked)
            whole = time.perf_counter() - started
        finally:
            simulate.evaluate = evaluate  # type: ignore[assignment]
    print(f"  suggest {whole:.2f} s: {len(spent)} proposals {sum(spent):.2f} s, the rest"
          f" {whole - sum(spent):.2f} s", flush=True)
    print("  " + json.dumps(result_digests.canonical(found), sort_keys=True), flush=True)


def main() -> None:
    p = c.parser(__doc__.splitlines()[0])
    p.add_argument("--against", type=Path, metavar="DIR", help="run that checkout's tickq instead")
    p.add_argument("registry", nargs="*", type=Path)
    args = p.parse_args()
    c.run_against(args.against, __file__)
    with c.server(args.database_url) as server, c.fresh_database(server, "suggest") as url:
        from tickq import db

        with db.connect(url) as conn:
            print(c.server_info(conn), flush=True)
        for path in args.registry or DEFAULT:
            measure(url, path)
        print(f"load average after {', '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
