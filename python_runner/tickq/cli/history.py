"""The `tickq history|upcoming` commands: a kind's runs, one run, what falls due next."""

from __future__ import annotations

import argparse
import json
import sys

from tickq.cli import common
from tickq.cli.text import json_value, table, when
from tickq.db.api import page
from tickq.db.errors import EXIT_OK, InvalidInput, NoAnswer
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
    print(table(
        ["run", "trigger", "try", "claimed (UTC)", "waited", "duration", "outcome", "exit",
         "slots"],
        [[str(r["run_id"]), r["run_trigger"], str(r["attempt"]), when(r["claimed_at"], utc=True),
          human_duration(r["waited"]), human_duration(r["duration"]), r["outcome"],
          "-" if r["exit_code"] is None else str(r["exit_code"]), str(r["slots_merged"])]
         for r in rows],
    ))
    return EXIT_OK


def _run(args: argparse.Namespace) -> int:
    with common.open_queue(args) as conn:
        run = page.run_detail(conn, args.run)
    if run is None:
        raise NoAnswer(f"no run {args.run}")
    if args.json:
        print(json.dumps(run, default=json_value, indent=2))
        return EXIT_OK
    for key, value in run.items():
        if key != "output_tail":
            print(f"{key:13} {json_value(value) if value is not None else '-'}")
    print("output_tail:")
    sys.stdout.write(run["output_tail"] or "")
    return EXIT_OK


def cmd_upcoming(args: argparse.Namespace) -> int:
    with common.open_queue(args) as conn:
        rows = page.upcoming(conn, args.hours, args.limit)
    if args.json:
        print(json.dumps(rows, default=json_value, indent=2))
        return EXIT_OK
    print(table(
        ["due (UTC)", "kind", "lane", "trigger", "schedule"],
        [[when(r["due_at"], utc=True), r["kind"], r["priority"], r["trigger"], r["schedule"]]
         for r in rows],
    ))
    return EXIT_OK
