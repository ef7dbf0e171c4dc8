"""`check` and `simulate`, with the options they share."""

from __future__ import annotations

import argparse

from tickq.cli.options import Add, Subparsers, values


def build(add: Add, sub: Subparsers, common: argparse.ArgumentParser) -> None:
    chk = add("check", "check:cmd_check", "exit 1 unless the cadences fit the slots with margin "
              "and no kind waits past stale_after in the worst case")
    chk.add_argument("--suggest", action="store_true",
                     help="when the worst case starves, propose the smallest change that passes")
    sim = add("simulate", "check:cmd_simulate",
              "run the registry with a moved clock; exit 1 on starvation")
    sim.add_argument("--hours", type=float, default=None,
                     help="simulated hours (default: every schedule once, plus stale_after)")
    sim.add_argument("--at", type=values.instant, default=None, metavar="T",
                     help="deploy the registry at T instead of now (ISO 8601; without an "
                          "offset, UTC), e.g. to replay a month end or a clock change")
    for p in (chk, sim):
        p.add_argument(
            "--durations", choices=("timeout", "observed"), default="timeout",
            help="each run holds its slot for its timeout (worst case, default) or the queue's p95",
        )
