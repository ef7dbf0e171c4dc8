"""Where `check`'s simulation spends its time: each window of a registry simulated in a scratch
database with `track_functions = all`, then per window the runs simulated through the real
claim and report and the runs copied, and over all windows the functions that took the most
time of their own (`pg_stat_user_functions`).

    .venv/bin/python bench/simulate_profile.py [--kinds N | --registry PATH] [--windows N]
        [--hours H] [--at ISO] [--top N] [--skip N]

Default: `crontabs.many_crons` with 1,000 kinds (their month and month ends), the clock at
2027-02-24 09:00 UTC (as bench/result_digests.py), every window; `--hours` cuts each window
(the first day of a window has no day before it to copy); `--skip 1` leaves out the first
window (the month: its month ends alone, as `check` gives them a database of their own). Per
window: the runs (simulated and copied), those simulated (calls of finish_run), the parts
simulated (simulation_events), the copies (simulation_copy) and the parts whose state was kept
(simulation_mark).
"""

from __future__ import annotations

import sys

sys.dont_write_bytecode = True

import dataclasses  # noqa: E402
import datetime as dt  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from decimal import Decimal  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import _common as c  # noqa: E402
import crontabs  # noqa: E402

AT = "2027-02-24T09:00:00+00:00"
FUNCTIONS = ("SELECT funcname, calls, round(total_time) AS total_ms, round(self_time) AS self_ms"
             " FROM pg_stat_user_functions ORDER BY self_time DESC LIMIT %s")

COUNTED = ("finish_run", "simulation_events", "simulation_copy", "simulation_mark")


def counts(conn: Any) -> dict[str, int]:
    """Calls so far of the functions counted per window (this backend's, sent first)."""
    conn.execute("SELECT pg_stat_force_next_flush()")
    conn.execute("SELECT pg_stat_clear_snapshot()")
    rows = conn.execute("SELECT funcname, calls FROM pg_stat_user_functions"
                        " WHERE funcname = ANY(%s)", (list(COUNTED),)).fetchall()
    return {name: calls for name, calls in rows}


def main() -> None:
    p = c.parser(__doc__.splitlines()[0])
    p.add_argument("--kinds", type=int, default=1000, help="many_crons kinds (default 1000)")
    p.add_argument("--registry", type=Path, help="this registry instead of many_crons")
    p.add_argument("--windows", type=int, help="only the first N windows")
    p.add_argument("--skip", type=int, default=0, help="leave out the first N windows")
    p.add_argument("--hours", type=float, help="cut each window to H hours")
    p.add_argument("--at", default=AT, help=f"the clock (default {AT})")
    p.add_argument("--top", type=int, default=25, help="functions listed (default 25)")
    args = p.parse_args()
    from tickq.db.api import check as api
    from tickq.registry import load_registry

    at = dt.datetime.fromisoformat(args.at)
    with (tempfile.TemporaryDirectory(prefix="tickq-bench-profile-") as tmp,
          c.server(args.database_url) as server, c.fresh_database(server, "profile") as url):
        path = args.registry or crontabs.many_crons(Path(tmp), args.kinds)
        registry = load_registry(path)
        with api.scratch(url) as conn:
            print(c.server_info(conn), flush=True)
            api.load(conn, registry, now=at)
            conn.execute("SET track_functions = 'all'")
            print("| window | hours | wall s | runs | simulated | parts simulated | copies"
                  " | marks |\n|---|---:|---:|---:|---:|---:|---:|---:|")
            seen = counts(conn)
            for window in api.windows(conn, now=at)[args.skip:args.windows]:
                if args.hours:
                    window = dataclasses.replace(window, hours=Decimal(str(args.hours)))
                started = time.perf_counter()
                api.simulate_window(conn, window, None, steady=True)
                wall = time.perf_counter() - started
                runs = conn.execute("SELECT count(*) FROM tickq.job_run AS r"
                                    " WHERE r.dispatcher = 'simulator'").fetchone()
                now = counts(conn)
                done = {f: now.get(f, 0) - seen.get(f, 0) for f in COUNTED}
                seen = now
                print(f"| {window.starts_at:%Y-%m-%d %H:%M} | {window.hours} | {wall:.1f} | "
                      f"{runs[0] if runs else 0:,} | {done['finish_run']:,} | "
                      f"{done['simulation_events']:,} | {done['simulation_copy']:,} | "
                      f"{done['simulation_mark']:,} |", flush=True)
            counts(conn)
            print("\n| function | calls | total ms | self ms |\n|---|---:|---:|---:|")
            for row in conn.execute(FUNCTIONS, (args.top,)).fetchall():
                print(f"| {row[0]} | {row[1]:,} | {row[2]:,} | {row[3]:,} |")


if __name__ == "__main__":
    main()
