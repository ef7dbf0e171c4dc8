"""The `tickq history|upcoming` commands: a kind's runs, one run, what falls due next."""

from __future__ import annotations

import argparse
import json
import sys
from datetime import datetime

from tickq.cli import common
from tickq.cli.text import json_value, shown, table, when
from tickq.db.api import page
from tickq.db.errors import EXIT_OK, InvalidInput, NoAnswer
from tickq.page.upcoming import held_note, left_out
from tickq.registry.durations import human_duration


def cmd_history(args: argparse.Namespace) -> int:
    if (args.kind is None) == (args.run is None):
        raise InvalidInput("history takes a KIND or --run ID")
    if args.run is not None:
        return _run(args)
    with common.open_queue(args) as conn:
        rows = page.kind_history(conn, args.kind, args.limit)
    if args.json:
        print(json.dumps(rows, default=json_value, indent=2))
        return EXIT_OK
    # A run's weight and pools get columns only when one of the runs listed had them.
    takes = any(r["weight"] != 1 or r["pools"] for r in rows)
    print(shown(table(
        ["run", "trigger", "try", "claimed (UTC)", "waited", "duration", "outcome", "exit",
         "slots", "slot (UTC)"] + (["weight", "pools"] if takes else []),
        [[str(r["run_id"]), r["run_trigger"], str(r["attempt"]), when(r["claimed_at"], utc=True),
          human_duration(r["waited"]), human_duration(r["duration"]), r["outcome"],
          "-" if r["exit_code"] is None else str(r["exit_code"]), _slots(r["slots_merged"]),
          when(r["slot_at"], utc=True)]
         + ([str(r["weight"]), ", ".join(r["pools"]) or "-"] if takes else [])
         for r in rows],
    )))
    return EXIT_OK


def _slots(merged: int) -> str:
    """The schedule slots a run stands for; a retry or a manual run stands for none of its own
    (a retry's slot is its first try's), shown as "-", not as 0 slots of capacity."""
    return str(merged) if merged else "-"


def _run(args: argparse.Namespace) -> int:
    with common.open_queue(args) as conn:
        run = page.run_detail(conn, args.run)
    if run is None:
        raise NoAnswer(f"no run {args.run}")
    if args.json:
        print(json.dumps(run, default=json_value, indent=2))
        return EXIT_OK
    for key, value in run.items():
        if key == "pools":
            print(f"{key:13} {', '.join(value) or '-'}")
        elif key != "output_tail":
            print(shown(f"{key:13} {json_value(value) if value is not None else '-'}"))
    print("output_tail:")
    sys.stdout.write(shown(run["output_tail"] or ""))
    return EXIT_OK


def cmd_upcoming(args: argparse.Namespace) -> int:
    with common.open_queue(args) as conn:
        rows = page.upcoming(conn, args.hours, args.limit)
    if args.json:
        print(json.dumps(rows, default=json_value, indent=2))
        return EXIT_OK

    def utc(value: datetime | None) -> str:
        return when(value, utc=True) + " UTC" if value is not None else "-"

    print(table(
        ["due (UTC)", "kind", "lane", "trigger", "schedule", "note"],
        [[when(r["due_at"], utc=True), r["kind"], r["priority"],
          "-" if r["due_at"] is None else r["trigger"], r["schedule"], held_note(r, utc)]
         for r in rows],
    ))
    more = left_out(rows)
    if more:
        print(f"{more} more in the next {args.hours:g} hours "
              f"(--limit {rows[0]['total']} lists them all)")
    return EXIT_OK
