"""An operator's commands on one kind or run: `pause`, `resume`, `cancel`, `forget`."""

from __future__ import annotations

import argparse

from tickq.cli.options import Add, Subparsers


def build(add: Add, sub: Subparsers, common: argparse.ArgumentParser) -> None:
    pause = add("pause", "operator:cmd_pause",
                "stop claiming a kind until resumed, for a while or until a time (a run going "
                "on finishes; `tickq run` still runs it by hand)")
    pause.add_argument("kind")
    when = pause.add_mutually_exclusive_group()
    when.add_argument("--for", dest="for_", metavar="DURATION", help='e.g. "2h", "1d"')
    when.add_argument("--until", metavar="TIME",
                      help='"2026-12-01 09:00" or "18:00" (the registry\'s zone unless given)')
    pause.add_argument("--reason", help="why, shown in tickq status")
    add("resume", "operator:cmd_resume", "claim a paused kind again").add_argument("kind")
    cancel = add("cancel", "operator:cmd_cancel",
                 "ask the dispatcher holding a run (on any host) to stop it: its process tree "
                 "is stopped within seconds and the run ends `cancelled` (no retry, not a "
                 "failure; the kind's next slot as after a normal finish)")
    cancel.add_argument("target", metavar="RUN_ID|KIND", help="a run id, or a kind: its live run")
    cancel.add_argument("--reason", help="why, recorded on the run with who asked")
    add("forget", "operator:cmd_forget", "delete a retired kind and its runs (`tickq status "
        "--retired` lists them); a kind still in the registry is refused").add_argument("kind")
