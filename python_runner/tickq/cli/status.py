"""`tickq status`: the queue for people (fitted to the terminal or COLUMNS, whole through a
pipe; times in the registry's zone and relative to now), for scripts (`--json`), for monitors
(`--check`, exit 1 on a problem) and for a terminal left open (`--watch`).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from datetime import datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from tickq.cli import common
from tickq.cli.text import json_value, table
from tickq.db.api import status
from tickq.db.api.session import Connection
from tickq.db.errors import EXIT_NO, EXIT_OK, InvalidInput
from tickq.host.ledger import Ledger
from tickq.host.spool import Spool
from tickq.registry import RegistryError
from tickq.registry.durations import coarse_duration, human_duration
from tickq.registry.place import as_given, resolved

NARROW = 80
POOLS_LISTED = 8  # pools with a line of their own; past it, only those held or waited on
HOLDERS_NAMED = 4  # runs named on a slots or pool line
WATCH_SECONDS = (0.5, 86400.0)  # a redraw at most twice a second, at least once a day


def cmd_status(args: argparse.Namespace) -> int:
    if getattr(args, "retired", False):
        return _print_retired(args)
    if getattr(args, "watch", None) is not None:
        return _watch(args)
    with common.open_queue(args) as conn:
        snapshot = _snapshot(conn, with_problems=args.check or args.json, args=args)
    if args.json:
        print(json.dumps(snapshot, default=json_value, indent=2))
        return EXIT_NO if args.check and snapshot["problems"] else EXIT_OK
    if args.check:
        return _print_check(snapshot)
    print(render(snapshot, wide=args.wide, width=_width()))
    return EXIT_OK


def _snapshot(conn: Connection, with_problems: bool, args: argparse.Namespace) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "queue": _queue(conn, args),
        "now": status.now(conn),
        "timezone": status.timezone(conn),
        "stale_due": status.stale_due(conn),
        "kinds": status.queue_status(conn),
        "slots": status.slot_occupancy(conn),
        "pools": status.pool_occupancy(conn),
    }
    if with_problems:
        problems = status.health_problems(conn)
        ledger = Ledger().problem()
        if ledger:
            problems.append({"kind": None, "problem": "ledger", "detail": ledger})
        problems.extend(_spool_problems(Spool(Ledger().folder)))
        above, _ = queue_lines(doc["queue"])
        problems.extend({"kind": None, "problem": "queue", "detail": line.split(": ", 1)[1]}
                        for line in above)
        doc["problems"] = problems
    return doc


def _queue(conn: Connection, args: argparse.Namespace) -> dict[str, Any]:
    """Which database this is, whose queue, and this registry (its file as given and with
    links followed, its project): so another project's queue is never read unawares."""
    try:
        found = common.registry_if_any(args)
    except RegistryError:  # `status` reads the queue whatever the file says
        found = None
    source = {"path": str(as_given(args.registry)), "resolved": str(resolved(args.registry)),
              "project": found.settings.project if found is not None else None}
    got = status.queue_of(conn, source)
    return {
        "database": got["database"], "server": got["server"], "port": got["port"],
        "embedded": not (args.database_url or os.environ.get("DATABASE_URL")),
        "registry": source["path"], "registry_found": Path(args.registry).is_file(),
        "synced_by": {k: got[k] for k in ("path", "host", "project", "synced_at")}
        if got["synced"] else None,
        # No registry here to compare with: nothing to warn of.
        "this_project": got["this_project"] or not Path(args.registry).is_file(),
    }


def queue_lines(queue: dict[str, Any] | None) -> tuple[list[str], list[str]]:
    """The warning above everything when the queue is another project's, and the line under
    the table naming the database and the registry it was last synced by."""
    if queue is None:
        return [], []
    where = (f"the embedded server (socket {queue['server']})" if queue["embedded"]
             else f"{queue['server']}:{queue['port']}")
    here = f"queue: database {queue['database']} on {where}"
    by = queue["synced_by"]
    if by is None:
        mine = (f"this registry: {queue['registry']}" if queue["registry_found"] else
                f"no registry at {queue['registry']}: --registry FILE or TICKQ_REGISTRY names it")
        return [], [f"{here}, not synced yet ({mine})"]
    record = by["path"] + (f" (project {by['project']})" if by["project"] else "")
    if queue["this_project"]:
        return [], [f"{here}, synced by {record}"]
    host = f" on host {by['host']}" if by["host"] else ""
    return [f"WARNING another project's queue: database {queue['database']} on {where} was last "
            f"synced by {record}{host}, not by {queue['registry']}; give this project's "
            "database with --database-url or DATABASE_URL"], [f"{here}, synced by {record}"]


def _print_retired(args: argparse.Namespace) -> int:
    """The retired kinds, kept with their runs until `tickq forget KIND`."""
    with common.open_queue(args) as conn:
        found = status.retired_kinds(conn)
        zone = ZoneInfo(status.timezone(conn))
    if args.json:
        print(json.dumps(found, default=json_value, indent=2))
        return EXIT_OK
    if not found:
        print("no retired kinds")
        return EXIT_OK
    print(table(["kind", "retired", "runs", "last run"], [
        [k["kind"], _local(k["retired_at"], zone), str(k["runs"]),
         _local(k["last_run_at"], zone) if k["last_run_at"] else "-"] for k in found]))
    print("tickq forget KIND deletes one and its runs")
    return EXIT_OK


def _local(when: datetime, zone: ZoneInfo) -> str:
    return f"{when.astimezone(zone):%Y-%m-%d %H:%M} {zone.key}"


def _spool_problems(spool: Spool) -> list[dict[str, Any]]:
    """Kept results this host cannot report: a spool folder not read, files moved aside."""
    found = []
    refused = spool.problem()
    if refused:
        found.append({"kind": None, "problem": "spool", "detail": refused})
    rejected = spool.rejected_count()
    if rejected:
        found.append({"kind": None, "problem": "spool", "detail": (
            f"{rejected} file(s) in {spool.folder / 'rejected'} could not be reported (each "
            "named in the tick's log): look at them, then remove them")})
    return found


def _print_check(snapshot: dict[str, Any]) -> int:
    """One line per problem and exit 1, or one line saying all is well and exit 0."""
    problems = snapshot["problems"]
    for p in problems:
        who = f"{p['kind']}: " if p["kind"] else ""
        print(f"PROBLEM {p['problem']}: {who}{p['detail']}")
    if problems:
        return EXIT_NO
    kinds = [k for k in snapshot["kinds"] if k["state"] != "retired"]
    print(f"ok: {len(kinds)} kinds, nothing stale, failing or stuck; the timer fires")
    return EXIT_OK


def _watch(args: argparse.Namespace) -> int:
    """Redraw in place every few seconds, like watch(1); Ctrl-C ends it quietly (a server
    that goes away while watching ends it as any lost database does)."""
    seconds = args.watch
    low, high = WATCH_SECONDS
    if not low <= seconds <= high:  # also false for nan
        raise InvalidInput(f"--watch must be from {low:g} to {high:g} seconds, got {seconds:g}")
    try:
        with common.open_queue(args) as conn:
            while True:
                text = render(_snapshot(conn, with_problems=False, args=args),
                              wide=args.wide, width=_width())
                stamp = f"every {seconds:g}s, Ctrl-C to stop"
                sys.stdout.write("\x1b[H\x1b[2J" + stamp + "\n" + text + "\n")
                sys.stdout.flush()
                time.sleep(seconds)
    except KeyboardInterrupt:
        sys.stdout.write("\n")
        return EXIT_OK


def _width() -> int | None:
    """The width to fit the table to: COLUMNS when set (as ls and git honour it), else the
    terminal's; None through a pipe or into a file, so `tickq status | grep KIND` sees whole
    names."""
    columns = os.environ.get("COLUMNS", "").strip()
    if columns.isdigit() and int(columns) > 0:
        return max(40, int(columns))
    if sys.stdout.isatty():
        return max(40, shutil.get_terminal_size((NARROW, 24)).columns)
    return None


# ---------------------------------------------------------------- rendering


def render(snapshot: dict[str, Any], *, wide: bool, width: int | None = NARROW) -> str:
    now: datetime = snapshot["now"]
    zone = ZoneInfo(snapshot["timezone"])
    above, under = queue_lines(snapshot.get("queue"))
    lines = above + [
        f"WARNING stale: {s['kind']} ({s['priority']}) due since {_at(s['due_at'], now, zone)}, "
        f"unclaimed for {human_duration(s['waiting'])}"
        for s in snapshot["stale_due"]
    ]
    for k in snapshot["kinds"]:
        if k["state"] == "paused":
            end = k["paused_until"]
            until = ("until resumed" if end is None
                     else f"until {_at(end, now, zone)} ({_rel(end, now)})")
            lines.append(f"paused: {k['kind']} {until} by {k['paused_by']}"
                         + (f": {k['paused_reason']}" if k["paused_reason"] else ""))
        if k.get("steps") and not wide:  # a chain: its last run's steps, on a line of their own
            lines.append(f"chain {k['kind']}: last run {k['steps']}")
    lines.append(f"times in {zone.key}, now {now.astimezone(zone):%Y-%m-%d %H:%M:%S %Z}")
    if wide:
        header = ["kind", "priority", "schedule", "state", "next due", "in", "streak",
                  "last", "finished", "ago", "took", "lease", "paused until", "reason", "steps",
                  "weight", "pools"]
        rows = [[
            k["kind"], k["priority"], k["schedule"], k["state"],
            _at(k["next_due_at"], now, zone, full=True), _rel(k["next_due_at"], now),
            str(k["failure_streak"]), k["last_outcome"] or "-",
            _at(k["last_finished_at"], now, zone, full=True), _rel(k["last_finished_at"], now),
            human_duration(k["last_duration"]),
            (f"{k['leased_by']} until {_at(k['leased_until'], now, zone, full=True)}"
             if k["leased_by"] else "-"),
            ("until resumed" if k["state"] == "paused" and k["paused_until"] is None
             else _at(k["paused_until"], now, zone, full=True)),
            k["paused_reason"] or "-",
            k.get("steps") or "-",
            str(k["weight"]), ", ".join(k["pools"]) or "-",
        ] for k in snapshot["kinds"]]
        lines.append(table(header, rows))
    else:
        # Weights and pools get a column only in a queue that uses them.
        takes = any(k["weight"] != 1 or k["pools"] for k in snapshot["kinds"])
        header = ["kind", "schedule", "state", "next", "last"] + (["takes"] if takes else [])
        rows = [[
            k["kind"], k["schedule"], k["state"], _next(k, now, zone), _last(k, now),
        ] + ([_takes(k)] if takes else []) for k in snapshot["kinds"]]
        lines.append(table(header, rows, width=width, shrink=(0, 1)))
    # Under the table, so the lines above it stay where scripts and eyes expect them.
    lines.extend(_fit(line, width) for line in capacity_lines(snapshot) + under)
    return "\n".join(lines)


def capacity_lines(snapshot: dict[str, Any]) -> list[str]:
    """The global slots and each pool: how many are held, by which runs (a run's weight where
    it holds more than one slot), a full pool and the kinds waiting on it. Bounded: past
    POOLS_LISTED pools only those held or waited on have a line."""
    slots = snapshot["slots"]
    lines = [f"slots: {slots['busy']} of {slots['slots']} held{_holders(slots['holders'])}"]
    pools = snapshot["pools"]
    listed = pools if len(pools) <= POOLS_LISTED else [
        p for p in pools if p["busy"] or p["waiting"]][:POOLS_LISTED]
    for p in listed:
        state = ("; draining: gone from the registry" if p["slots"] == 0
                 else "; FULL" if p["free"] == 0 else "")
        waiting = f"; {p['waiting']} kind(s) due and waiting" if p["waiting"] else ""
        lines.append(f"pool {p['pool']}: {p['busy']} of {p['slots']} held"
                     f"{_holders(p['holders'], weighted=False)}{state}{waiting}")
    if len(pools) > len(listed):
        lines.append(f"{len(pools) - len(listed)} more pool(s), none held or waited on "
                     "(tickq status --json lists every pool)")
    return lines


def _holders(holders: list[dict[str, Any]], weighted: bool = True) -> str:
    """The runs holding slots, by kind and run; in the global slots with each run's weight
    where it holds more than one (in a pool a run holds one slot whatever its weight)."""
    named = [f"{h['kind']} (run {h['run_id']}"
             + (f", weight {h['weight']})" if weighted and h["weight"] > 1 else ")")
             for h in holders[:HOLDERS_NAMED]]
    more = f" and {len(holders) - HOLDERS_NAMED} more" if len(holders) > HOLDERS_NAMED else ""
    return f" by {', '.join(named)}{more}" if named else ""


def _takes(k: dict[str, Any]) -> str:
    """What one run of the kind takes: its weight of the global slots, then its pools."""
    return str(k["weight"]) + (f" + {', '.join(k['pools'])}" if k["pools"] else "")


def _fit(line: str, width: int | None) -> str:
    return line if width is None or len(line) <= width else line[: width - 1] + "…"


def _next(k: dict[str, Any], now: datetime, zone: ZoneInfo) -> str:
    when = k["next_due_at"]
    if when is None:
        return "-"
    return f"{_at(when, now, zone)} {_rel(when, now)}"


def _last(k: dict[str, Any], now: datetime) -> str:
    if k["last_outcome"] is None:
        return "-"
    n, last, streak_of = k["failure_streak"], k["last_outcome"], k.get("streak_outcome")
    if n and streak_of and streak_of != last:
        # An interrupted run leaves the streak as it was: name the streak's own outcome.
        return f"{last} after {streak_of} x{n} {_rel(k['last_finished_at'], now)}"
    streak = f" x{n}" if n > 1 else ""
    return f"{last}{streak} {_rel(k['last_finished_at'], now)}"


def _at(when: datetime | None, now: datetime, zone: ZoneInfo, full: bool = False) -> str:
    """A time in the registry's zone: HH:MM today, "Dec 01 06:00" otherwise."""
    if when is None:
        return "-"
    if when.year in (1, 9999):  # 'infinity' or '-infinity' (tickq.db.connect's loader)
        return "never" if when.year == 9999 else "-"
    local = when.astimezone(zone)
    if full:
        return f"{local:%Y-%m-%d %H:%M:%S}"
    today = local.date() == now.astimezone(zone).date()
    return f"{local:%H:%M}" if today else f"{local:%b %d %H:%M}"


def _rel(when: datetime | None, now: datetime) -> str:
    """"in 3m", "12m ago", "now", like systemctl list-timers."""
    if when is None or when.year in (1, 9999):
        return "-"
    seconds = (when - now).total_seconds()
    if abs(seconds) < 1:
        return "now"
    text = coarse_duration(abs(seconds))
    return f"in {text}" if seconds > 0 else f"{text} ago"

