"""`tickq status`: the queue for people (80 columns, times in the registry's zone and relative
to now), for scripts (`--json`), for monitors (`--check`, exit 1 on a problem) and for a
terminal left open (`--watch`).

The connection comes from cli.py (`open_db`: connected and migrated, or a one-line failure).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import psycopg
from psycopg.rows import dict_row

from tickq import db
from tickq.host.ledger import Ledger
from tickq.registry.durations import format_duration

EXIT_OK, EXIT_NO, EXIT_DATABASE = 0, 1, 3
NARROW = 80

OpenDb = Callable[[argparse.Namespace], psycopg.Connection]


def cmd_status(args: argparse.Namespace, open_db: OpenDb) -> int:
    if getattr(args, "watch", None) is not None:
        return _watch(args, open_db)
    with open_db(args) as conn:
        conn.row_factory = dict_row  # type: ignore[assignment]
        snapshot = _snapshot(conn, with_problems=args.check or args.json)
    if args.json:
        print(json.dumps(snapshot, default=_json_value, indent=2))
        return EXIT_NO if args.check and snapshot["problems"] else EXIT_OK
    if args.check:
        return _print_check(snapshot)
    print(render(snapshot, wide=args.wide, width=_width()))
    return EXIT_OK


def _snapshot(conn: psycopg.Connection, with_problems: bool) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "now": conn.execute("SELECT now() AS now").fetchone()["now"],  # type: ignore[index]
        "timezone": conn.execute(db.load_query("settings_timezone")).fetchone()["timezone"],  # type: ignore[index]
        "stale_due": conn.execute(db.load_query("stale_due")).fetchall(),
        "kinds": conn.execute(db.load_query("queue_status")).fetchall(),
    }
    if with_problems:
        problems = conn.execute(db.load_query("health_problems")).fetchall()
        ledger = Ledger().problem()
        if ledger:
            problems.append({"kind": None, "problem": "ledger", "detail": ledger})
        doc["problems"] = problems
    return doc


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


def _watch(args: argparse.Namespace, open_db: OpenDb) -> int:
    """Redraw in place every few seconds, like watch(1); Ctrl-C ends it quietly."""
    seconds = max(0.5, args.watch)
    try:
        with open_db(args) as conn:
            conn.row_factory = dict_row  # type: ignore[assignment]
            while True:
                text = render(_snapshot(conn, with_problems=False), wide=args.wide,
                              width=_width())
                stamp = f"every {seconds:g}s, Ctrl-C to stop"
                sys.stdout.write("\x1b[H\x1b[2J" + stamp + "\n" + text + "\n")
                sys.stdout.flush()
                time.sleep(seconds)
    except KeyboardInterrupt:
        sys.stdout.write("\n")
        return EXIT_OK
    except psycopg.OperationalError as exc:  # the server went away while watching
        cause = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        print(f"tickq: lost the database: {cause}", file=sys.stderr)
        return EXIT_DATABASE


def _width() -> int:
    """The terminal's width when there is one, else 80 (a pipe, a file, a test)."""
    if sys.stdout.isatty():
        return max(40, shutil.get_terminal_size((NARROW, 24)).columns)
    return NARROW


# ---------------------------------------------------------------- rendering


def render(snapshot: dict[str, Any], *, wide: bool, width: int = NARROW) -> str:
    now: datetime = snapshot["now"]
    zone = ZoneInfo(snapshot["timezone"])
    lines = [
        f"WARNING stale: {s['kind']} ({s['priority']}) due since {_at(s['due_at'], now, zone)}, "
        f"unclaimed for {_span(s['waiting'])}"
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
                  "last", "finished", "ago", "took", "lease", "paused until", "reason", "steps"]
        rows = [[
            k["kind"], k["priority"], k["schedule"], k["state"],
            _at(k["next_due_at"], now, zone, full=True), _rel(k["next_due_at"], now),
            str(k["failure_streak"]), k["last_outcome"] or "-",
            _at(k["last_finished_at"], now, zone, full=True), _rel(k["last_finished_at"], now),
            _span(k["last_duration"]) if k["last_duration"] is not None else "-",
            (f"{k['leased_by']} until {_at(k['leased_until'], now, zone, full=True)}"
             if k["leased_by"] else "-"),
            ("until resumed" if k["state"] == "paused" and k["paused_until"] is None
             else _at(k["paused_until"], now, zone, full=True)),
            k["paused_reason"] or "-",
            k.get("steps") or "-",
        ] for k in snapshot["kinds"]]
        lines.append(table(header, rows))
    else:
        header = ["kind", "schedule", "state", "next", "last"]
        rows = [[
            k["kind"], k["schedule"], k["state"], _next(k, now, zone), _last(k, now),
        ] for k in snapshot["kinds"]]
        lines.append(table(header, rows, width=width, shrink=(0, 1)))
    return "\n".join(lines)


def _next(k: dict[str, Any], now: datetime, zone: ZoneInfo) -> str:
    when = k["next_due_at"]
    if when is None:
        return "-"
    return f"{_at(when, now, zone)} {_rel(when, now)}"


def _last(k: dict[str, Any], now: datetime) -> str:
    if k["last_outcome"] is None:
        return "-"
    streak = f" x{k['failure_streak']}" if k["failure_streak"] > 1 else ""
    return f"{k['last_outcome']}{streak} {_rel(k['last_finished_at'], now)}"


def _at(when: datetime | None, now: datetime, zone: ZoneInfo, full: bool = False) -> str:
    """A time in the registry's zone: HH:MM today, "Dec 01 06:00" otherwise."""
    if when is None:
        return "-"
    local = when.astimezone(zone)
    if full:
        return f"{local:%Y-%m-%d %H:%M:%S}"
    today = local.date() == now.astimezone(zone).date()
    return f"{local:%H:%M}" if today else f"{local:%b %d %H:%M}"


def _rel(when: datetime | None, now: datetime) -> str:
    """"in 3m", "12m ago", "now", like systemctl list-timers."""
    if when is None:
        return "-"
    seconds = (when - now).total_seconds()
    if abs(seconds) < 1:
        return "now"
    text = _coarse(abs(seconds))
    return f"in {text}" if seconds > 0 else f"{text} ago"


def _coarse(seconds: float) -> str:
    """Two units at most: 45s, 3m, 1h20m, 2d3h."""
    s = int(seconds)
    for size, unit, small, small_unit in ((86400, "d", 3600, "h"), (3600, "h", 60, "m")):
        if s >= size:
            rest = (s % size) // small
            return f"{s // size}{unit}" + (f"{rest}{small_unit}" if rest else "")
    return f"{s // 60}m" if s >= 60 else f"{s}s"


def _span(value: timedelta) -> str:
    seconds = value.total_seconds()
    return format_duration(int(seconds)) if seconds >= 1 else f"{seconds:.1f}s"


def table(
    header: Sequence[str], rows: Sequence[Sequence[str]], *, width: int | None = None,
    shrink: Sequence[int] = (),
) -> str:
    """Columns two spaces apart; with `width`, the `shrink` columns (widest first) are cut
    with "…" until every line fits, so rows never wrap."""
    rows = [[str(x) for x in r] for r in rows]
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows, strict=False)]
    if width is not None:
        floor = {i: max(len(header[i]), 8) for i in shrink}
        while sum(widths) + 2 * (len(widths) - 1) > width:
            candidates = [i for i in shrink if widths[i] > floor[i]]
            if not candidates:
                break
            widest = max(candidates, key=lambda i: widths[i])
            widths[widest] -= 1
    lines = [list(header), ["-" * w for w in widths], *rows]
    return "\n".join(
        "  ".join(_fit(str(x), w).ljust(w) for x, w in zip(line, widths, strict=True)).rstrip()
        for line in lines
    )


def _fit(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _json_value(value: Any) -> Any:
    if hasattr(value, "isoformat"):
        return value.isoformat()
    if hasattr(value, "total_seconds"):
        return value.total_seconds()
    return str(value)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.add_argument("--wide", action="store_true",
                        help="every column, full times (no fitting to the terminal)")
    parser.add_argument(
        "--check", action="store_true",
        help="for monitors: one line per problem (a kind stale, failing past alert_after or "
             "stuck past its lease; no tick for two tick lengths; an unusable ledger folder) "
             "and exit 1, else exit 0")
    parser.add_argument("--watch", type=float, nargs="?", const=2.0, metavar="SECONDS",
                        help="redraw every SECONDS (default 2) until Ctrl-C")
