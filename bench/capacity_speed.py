"""How long `check`'s capacity verdict takes (tickq.db.api.check.capacity: the registry synced,
then tickq.capacity, capacity_total and capacity_verdict read) for `crontabs.many_crons`, and
with --top which SQL functions took the time (`track_functions = all`).

    .venv/bin/python bench/capacity_speed.py [--kinds 1000] [--reps 3] [--top N] [--against DIR]

Each rep runs the whole capacity step in the same scratch database (the sync is rolled back
each time); prints each rep's seconds, their median and the verdict. --against DIR runs DIR's
tickq instead (e.g. a `git archive` of an older commit), for a before/after in one sitting.
"""

from __future__ import annotations

import sys

sys.dont_write_bytecode = True

import statistics  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import _common as c  # noqa: E402
import crontabs  # noqa: E402

FUNCTIONS = ("SELECT funcname, calls, round(total_time) AS total_ms, round(self_time) AS self_ms"
             " FROM pg_stat_user_functions ORDER BY self_time DESC LIMIT %s")


def main() -> None:
    p = c.parser(__doc__.splitlines()[0])
    p.add_argument("--kinds", type=int, default=1000, help="many_crons kinds (default 1000)")
    p.add_argument("--reps", type=int, default=3, help="capacity steps timed (default 3)")
    p.add_argument("--top", type=int, default=0, help="list the N functions of most self time")
    p.add_argument("--against", type=Path, metavar="DIR", help="run that checkout's tickq instead")
    args = p.parse_args()
    c.run_against(args.against, __file__)
    import tickq
    from tickq.db.api import check as api
    from tickq.registry import load_registry

    with (tempfile.TemporaryDirectory(prefix="tickq-bench-capacity-") as tmp,
          c.server(args.database_url) as server, c.fresh_database(server, "capacity") as url):
        registry = load_registry(crontabs.many_crons(Path(tmp), args.kinds))
        with api.scratch(url) as conn:
            print(c.server_info(conn), f"\ntickq from {Path(tickq.__file__).parent}", flush=True)
            if args.top:
                conn.execute("SET track_functions = 'all'")
            seconds = []
            for _ in range(args.reps):
                started = time.perf_counter()
                report = api.capacity(conn, registry)
                seconds.append(time.perf_counter() - started)
            print(f"{args.kinds} kinds: capacity step {', '.join(f'{s:.2f}' for s in seconds)} s,"
                  f" median {statistics.median(seconds):.2f} s; {report.verdict}")
            if args.top:
                conn.execute("SELECT pg_stat_force_next_flush()")
                conn.execute("SELECT pg_stat_clear_snapshot()")
                for row in conn.execute(FUNCTIONS, (args.top,)).fetchall():
                    print(*row, sep=" | ")


if __name__ == "__main__":
    main()
