"""The status page and what it shows as text: `report`, `serve`, `history`, `upcoming`, `next`,
`schedule`."""

from __future__ import annotations

import argparse

from tickq.cli.options import Add, Subparsers, values


def build(add: Add, sub: Subparsers, common: argparse.ArgumentParser) -> None:
    rep = add("report", "page:cmd_report",
              "write the status page as one self-contained HTML file")
    rep.add_argument("--html", required=True, metavar="FILE", help="where to write the page")
    rep.add_argument("--hours", type=values.hours, default=24.0, help="window (default 24)")
    srv = add("serve", "page:cmd_serve", "serve the status page, read-only, on 127.0.0.1")
    srv.add_argument("--port", type=int, default=8787, help="port (default 8787; 0: any free)")
    srv.add_argument(
        "--host", default=None,
        help="address to listen on (default 127.0.0.1; any other address must be given here)",
    )
    srv.add_argument(
        "--allowed-host", action="append", metavar="NAME",
        help="a Host name to answer besides the bound address's own, e.g. the reverse proxy's "
        "(repeatable; any other name gets 421, against DNS rebinding)",
    )
    srv.add_argument("--hours", type=values.hours, default=24.0, help="window (default 24)")
    his = add("history", "history:cmd_history",
              "a kind's runs, newest first (or one run's whole output)")
    his.add_argument("kind", nargs="?", help="the kind")
    his.add_argument("--limit", type=values.positive, default=20, help="runs to show (default 20)")
    his.add_argument("--run", type=int, metavar="ID", help="one run, with its whole output tail")
    his.add_argument("--json", action="store_true", help="print JSON")
    upc = add("upcoming", "history:cmd_upcoming", "what falls due next, in order")
    upc.add_argument("--hours", type=values.hours, default=24.0, help="how far ahead (default 24)")
    upc.add_argument("--limit", type=values.positive, default=50, help="rows (default 50)")
    upc.add_argument("--json", action="store_true", help="print JSON")
    nxt = add("next", "schedule:cmd_next",
              "a kind's next slots from its registry schedule, in its zone and in UTC")
    nxt.add_argument("kind", help="the kind")
    sch = add("schedule", "schedule:cmd_schedule",
              "the next slots of any cron string (no registry needed), in its zone and in UTC")
    sch.add_argument("expression", help='five fields or an @ form, e.g. "0 6 1 * *"')
    sch.add_argument("--timezone", default="UTC", help="its IANA zone (default UTC)")
    for p in (nxt, sch):
        p.add_argument("--count", type=values.count, default=10, help="slots to show (default 10)")
        p.add_argument("--from", dest="after", type=values.instant, default=None, metavar="T",
                       help="slots after this ISO 8601 time (default now; UTC without an offset)")
        p.add_argument("--json", action="store_true",
                       help="print a JSON list of {at, utc, timezone}")
