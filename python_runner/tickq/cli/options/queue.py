"""The queue's commands: `tick`, `run`, `sync`, `migrate`, `psql`, `demo`."""

from __future__ import annotations

import argparse

from tickq.cli.options import Add, Subparsers

RUN_EXITS = """\
The command's output streams to stdout as it comes; tickq's log and the outcome line
("tickq: run 12 of KIND: failed, exit 3, 0.4s") go to stderr. Exit statuses:
  0        the run ended ok
  1        it did not: failed, timed out, could not start, or was not claimed
           (unknown kind, already running, no free slot)
  2        invalid registry or configuration
  3        the database cannot be reached
  128+N    stopped by signal N (the command got the same signal)"""

REPLACE_QUEUE = ("let this registry's sync retire the kinds of a queue another registry "
                 "synced last (replace that project's queue)")


def build(add: Add, sub: Subparsers, common: argparse.ArgumentParser) -> None:
    """tick, run, sync, migrate, psql, demo."""
    tick = add("tick", "queue:cmd_tick", "sync the registry, run what is due, report, and exit")
    run = add("run", "queue:cmd_run", "run one kind now (counted against the slots)")
    run.add_argument("kind")
    run.epilog = RUN_EXITS
    run.formatter_class = argparse.RawDescriptionHelpFormatter
    run.add_argument("--yes-i-ran-this-by-hand", action="store_true",
                     help="confirm the first run of an irreversible kind without a terminal")
    sync = add("sync", "queue:cmd_sync", "sync the registry into the queue and show the drift")
    for p in (tick, run, sync):
        p.add_argument("--replace-queue", action="store_true", help=REPLACE_QUEUE)
    add("migrate", "queue:cmd_migrate", "apply the schema to the database")
    add("psql", "queue:cmd_psql", "open psql on the configured database").add_argument(
        "psql_args", nargs=argparse.REMAINDER
    )
    add("demo", "queue:cmd_demo",
        "a real tick of the example registry in a fresh demo database")
