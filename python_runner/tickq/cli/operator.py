"""The `tickq pause|resume` commands: an operator's state kept in the database beside the
registry's `enabled` (which still wins), honoured by every claim; `tickq cancel`, which asks
the dispatcher holding a run to stop it; and `tickq forget`, which deletes a retired kind and
its runs."""

from __future__ import annotations

import argparse
import difflib
import getpass
import socket
import sys
from datetime import datetime, time, timedelta
from zoneinfo import ZoneInfo

from tickq.cli import common
from tickq.db.api import operator, status
from tickq.db.api.session import Connection
from tickq.db.errors import EXIT_NO, EXIT_OK, UNKNOWN_KIND, InvalidInput, NoAnswer
from tickq.host.ledger import Ledger
from tickq.registry.durations import parse_duration


def did_you_mean(conn: Connection, kind: str) -> str:
    """' (did you mean "x"?)' for a close kind name, else the kinds there are."""
    names = operator.kind_names(conn)
    close = difflib.get_close_matches(kind, names, n=3, cutoff=0.6)
    if close:
        return " (did you mean " + " or ".join(f'"{c}"' for c in close) + "?)"
    if len(names) <= 20:
        return f" (the kinds: {', '.join(names) or 'none yet: run tickq sync'})"
    return " (tickq status lists the kinds)"


def _until(args: argparse.Namespace, conn: Connection) -> datetime | None:
    """--for, --until or neither (None: until resumed). A time without a zone is in the
    registry's zone (settings.timezone); a bare time of day is its next occurrence."""
    if args.for_:
        try:
            seconds = parse_duration(args.for_)
        except ValueError as exc:
            raise InvalidInput(str(exc)) from None
        return datetime.now(ZoneInfo("UTC")) + timedelta(seconds=seconds)
    if not args.until:
        return None
    zone = ZoneInfo(status.timezone(conn))
    text = args.until.strip()
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        try:
            of_day = time.fromisoformat(text)
        except ValueError:
            raise InvalidInput(f'--until must be a date and time ("2026-12-01 09:00", with an '
                               f'optional zone offset) or a time of day ("18:00"), got "{text}"'
                               ) from None
        today = datetime.now(zone).date()
        when = datetime.combine(today, of_day, zone)
        if when <= datetime.now(zone):
            when = datetime.combine(today + timedelta(days=1), of_day, zone)
    return when if when.tzinfo is not None else when.replace(tzinfo=zone)


def cmd_pause(args: argparse.Namespace) -> int:
    with common.open_queue(args) as conn:
        until = _until(args, conn)
        by = f"{getpass.getuser()}@{socket.gethostname()}"
        try:
            paused_until = operator.pause_kind(conn, args.kind, until, args.reason, by)
        except NoAnswer as exc:
            raise _unknown(conn, args.kind, exc) from None
        zone = ZoneInfo(status.timezone(conn))
    ends = "until resumed" if paused_until is None else f"until {_local(paused_until, zone)}"
    print(f"paused {args.kind} {ends}" + (f": {args.reason}" if args.reason else ""))
    return EXIT_OK


def _local(when: datetime, zone: ZoneInfo) -> str:
    """A time as the operator gave it: in the registry's zone, to the minute when it is on
    one (--until 23:00), else to the second (--for 2h), never with microseconds."""
    local = when.astimezone(zone)
    shape = "%Y-%m-%d %H:%M" if local.second == local.microsecond == 0 else "%Y-%m-%d %H:%M:%S"
    return f"{local:{shape}} {zone.key}"


def cmd_resume(args: argparse.Namespace) -> int:
    with common.open_queue(args) as conn:
        try:
            was = operator.resume_kind(conn, args.kind)
        except NoAnswer as exc:
            raise _unknown(conn, args.kind, exc) from None
    print(f"resumed {args.kind}" if was else f"{args.kind} was not paused")
    return EXIT_OK


def cmd_cancel(args: argparse.Namespace) -> int:
    """Record the cancel; say who holds the run and whether it was seen lately. A dispatcher not
    seen cannot stop anything: exit 1, saying the run is lost when its lease ends."""
    with common.open_queue(args) as conn:
        # The database records who asked from its session; this is only what the client claims.
        claimed = f"{getpass.getuser()}@{socket.gethostname()}"
        asked = operator.request_cancel(conn, args.target, args.reason, claimed)
        zone = ZoneInfo(status.timezone(conn))
    run, holder = f"run {asked['run_id']} of {asked['kind']}", asked["leased_by"]
    ends = _local(asked["leased_until"], zone)
    # On the holder's own host its pid tells what its last poll cannot: whether it runs at all.
    gone = Ledger().dispatcher_gone(holder)
    if asked["dispatcher_seen"] and not gone:
        print(f"asked dispatcher {holder} to cancel {run}: it stops the run within "
              "seconds and records it as cancelled")
        return EXIT_OK
    if gone:
        print(f"tickq: cancel of {run} recorded, but dispatcher {holder} is not running (its "
              "process is gone from this host): nothing stops the run from here. The next tick "
              "on this host stops its command and records the run lost, and a run whose cancel "
              f"was asked is not retried (if no tick comes, its lease ends at {ends})",
              file=sys.stderr)
        return EXIT_NO
    seen = ("never asked for cancels" if asked["polled_at"] is None
            else f"last seen {_local(asked['polled_at'], zone)}")
    print(f"tickq: cancel of {run} recorded, but dispatcher {holder} is not seen "
          f"({seen}): it may be dead or cut off. If it is, nothing can stop the run from here; "
          f"the run is recorded as lost when its lease ends at {ends}, and not retried (if it "
          "is alive, it stops the run as soon as it asks)", file=sys.stderr)
    return EXIT_NO


def cmd_forget(args: argparse.Namespace) -> int:
    """Delete a retired kind and its runs, on purpose; a kind not retired is refused."""
    with common.open_queue(args) as conn:
        runs = operator.forget_kind(conn, args.kind)
    print(f"forgot {args.kind} and its {runs} run(s)")
    return EXIT_OK


def _unknown(conn: Connection, kind: str, exc: NoAnswer) -> NoAnswer:
    if exc.sqlstate != UNKNOWN_KIND:
        return exc
    return NoAnswer(f'no kind "{kind}" in the registry{did_you_mean(conn, kind)}', exc.sqlstate)
