"""What the queue holds now: `status`, `metrics`, `explain`."""

from __future__ import annotations

import argparse

from tickq.cli.options import Add, Subparsers


def build(add: Add, sub: Subparsers, common: argparse.ArgumentParser) -> None:
    p = add("status", "status:cmd_status", "the queue, with stale-due warnings on top")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument("--wide", action="store_true",
                   help="every column, full times (no fitting to the terminal)")
    p.add_argument(
        "--check", action="store_true",
        help="for monitors: one line per problem (a kind stale, failing past alert_after or "
             "stuck past its lease; no tick for two tick lengths; an unusable ledger folder; a "
             "spool folder not read, or spool files moved aside) "
             "and exit 1, else exit 0")
    p.add_argument("--retired", action="store_true",
                   help="list the retired kinds (gone from the registry, runs kept) instead")
    p.add_argument("--watch", type=float, nargs="?", const=2.0, metavar="SECONDS",
                   help="redraw every SECONDS (default 2; 0.5 to 86400) until Ctrl-C")
    add("metrics", "watch:cmd_metrics",
        "print the queue as Prometheus metrics (text format; `serve` answers /metrics too)")
    exp = add("explain", "watch:cmd_explain",
              "why a kind is or is not running now: running, paused, disabled, unarmed, "
              "waiting (and for what) or idle until its next slot")
    exp.add_argument("kind")
    exp.add_argument("--json", action="store_true", help="print JSON")
