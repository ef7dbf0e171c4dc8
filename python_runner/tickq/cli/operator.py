"""The `tickq pause|resume` commands: an operator's state kept in the database beside the
registry's `enabled` (which still wins), honoured by every claim.

The connection comes from cli.py (`open_db`: connected and migrated, or a one-line failure);
this module holds no exit statuses of its own beyond the ones cli.py documents.
"""

from __future__ import annotations

import argparse
import difflib
import getpass
import socket
import sys
from collections.abc import Callable
from datetime import datetime, time, timedelta
from zoneinfo import ZoneInfo

import psycopg

from tickq import db
from tickq.registry.durations import parse_duration

UNKNOWN_KIND, BAD_PAUSE = "TQ003", "TQ060"
EXIT_OK, EXIT_NO, EXIT_CONFIG = 0, 1, 2

OpenDb = Callable[[argparse.Namespace], psycopg.Connection]


def did_you_mean(conn: psycopg.Connection, kind: str) -> str:
    """' (did you mean "x"?)' for a close kind name, else the kinds there are."""
    names = [name for (name,) in conn.execute(db.load_query("kind_names")).fetchall()]
    close = difflib.get_close_matches(kind, names, n=3, cutoff=0.6)
    if close:
        return " (did you mean " + " or ".join(f'"{c}"' for c in close) + "?)"
    if len(names) <= 20:
        return f" (the kinds: {', '.join(names) or 'none yet: run tickq sync'})"
    return " (tickq status lists the kinds)"


def _until(args: argparse.Namespace, conn: psycopg.Connection) -> datetime | None:
    """--for, --until or neither (None: until resumed). A time without a zone is in the
    registry's zone (settings.timezone); a bare time of day is its next occurrence."""
    if args.for_:
        seconds = parse_duration(args.for_)
        return datetime.now(ZoneInfo("UTC")) + timedelta(seconds=seconds)
    if not args.until:
        return None
    [(zone_name,)] = conn.execute(db.load_query("settings_timezone")).fetchall()
    zone = ZoneInfo(zone_name)
    text = args.until.strip()
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        try:
            of_day = time.fromisoformat(text)
        except ValueError:
            raise ValueError(f'--until must be a date and time ("2026-12-01 09:00", with an '
                             f'optional zone offset) or a time of day ("18:00"), got "{text}"'
                             ) from None
        today = datetime.now(zone).date()
        when = datetime.combine(today, of_day, zone)
        if when <= datetime.now(zone):
            when = datetime.combine(today + timedelta(days=1), of_day, zone)
    return when if when.tzinfo is not None else when.replace(tzinfo=zone)


def cmd_pause(args: argparse.Namespace, open_db: OpenDb) -> int:
    with open_db(args) as conn:
        try:
            until = _until(args, conn)
        except ValueError as exc:
            print(f"tickq: {exc}", file=sys.stderr)
            return EXIT_CONFIG
        by = f"{getpass.getuser()}@{socket.gethostname()}"
        try:
            [(paused_until,)] = conn.execute(db.load_query("pause_kind"), {
                "kind": args.kind, "until": until, "reason": args.reason, "by": by,
            }).fetchall()
        except psycopg.Error as exc:
            return _refused(conn, args.kind, exc)
    ends = "until resumed" if paused_until is None else f"until {paused_until.isoformat()}"
    print(f"paused {args.kind} {ends}" + (f": {args.reason}" if args.reason else ""))
    return EXIT_OK


def cmd_resume(args: argparse.Namespace, open_db: OpenDb) -> int:
    with open_db(args) as conn:
        try:
            [(was,)] = conn.execute(db.load_query("resume_kind"), {"kind": args.kind}).fetchall()
        except psycopg.Error as exc:
            return _refused(conn, args.kind, exc)
    print(f"resumed {args.kind}" if was is not None else f"{args.kind} was not paused")
    return EXIT_OK


def _refused(conn: psycopg.Connection, kind: str, exc: psycopg.Error) -> int:
    if exc.sqlstate == UNKNOWN_KIND:
        print(f'tickq: no kind "{kind}" in the registry{did_you_mean(conn, kind)}',
              file=sys.stderr)
        return EXIT_NO
    if exc.sqlstate == BAD_PAUSE:
        print(f"tickq: {exc.diag.message_primary}", file=sys.stderr)
        return EXIT_CONFIG
    raise exc


def add_commands(
    sub: argparse._SubParsersAction, common: argparse.ArgumentParser, open_db: OpenDb
) -> None:
    text = ("stop claiming a kind until resumed, for a while or until a time (a run going on "
            "finishes; `tickq run` still runs it by hand)")
    pause = sub.add_parser("pause", parents=[common], help=text, description=text)
    pause.add_argument("kind")
    when = pause.add_mutually_exclusive_group()
    when.add_argument("--for", dest="for_", metavar="DURATION", help='e.g. "2h", "1d"')
    when.add_argument("--until", metavar="TIME",
                      help='"2026-12-01 09:00" or "18:00" (the registry\'s zone unless given)')
    pause.add_argument("--reason", help="why, shown in tickq status")
    pause.set_defaults(func=lambda args: cmd_pause(args, open_db))
    text = "claim a paused kind again"
    resume = sub.add_parser("resume", parents=[common], help=text, description=text)
    resume.add_argument("kind")
    resume.set_defaults(func=lambda args: cmd_resume(args, open_db))
