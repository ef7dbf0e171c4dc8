"""The `tickq report|serve|history|upcoming` commands: the queue as a page and as history.

Each command gets its database connection from ``open_queue`` (cli.py's: resolve the URL, connect,
migrate), so exit statuses for an unreachable database stay where the others are decided.
"""

from __future__ import annotations

import argparse
import ipaddress
import json
import sys
from collections.abc import Callable
from datetime import UTC
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import psycopg
from psycopg.rows import dict_row

from tickq import db
from tickq.page import render as report
from tickq.registry.durations import format_duration

OpenQueue = Callable[[argparse.Namespace], psycopg.Connection]
EXIT_OK, EXIT_NO, EXIT_CONFIG = 0, 1, 2
PAGE_HEADERS = {
    "Content-Type": "text/html; charset=utf-8",
    # The page holds job output, which is untrusted: no script, no remote load, no framing.
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


def _hours(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"hours must be a number, got {text!r}") from None
    if not 0 < value <= 24 * 90:
        raise argparse.ArgumentTypeError(f"hours must be more than 0 and at most 2160, got {text}")
    return value


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number, got {text!r}") from None
    if not 1 <= value <= 100_000:
        raise argparse.ArgumentTypeError(f"must be from 1 to 100000, got {text}")
    return value


def _rows(conn: psycopg.Connection, name: str, params: dict[str, Any]) -> list[dict[str, Any]]:
    with conn.cursor(row_factory=dict_row) as cur:
        return cur.execute(db.load_query(name), {"now": None, **params}).fetchall()


def _json(value: Any) -> Any:
    if hasattr(value, "isoformat"):
        return value.isoformat()
    if hasattr(value, "total_seconds"):
        return value.total_seconds()
    return str(value)


def _when(value: Any) -> str:
    return value.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S") if value is not None else "-"


def _dur(value: Any) -> str:
    if value is None:
        return "-"
    seconds = value.total_seconds()
    return format_duration(int(seconds)) if seconds >= 1 else f"{seconds:.1f}s"


def _print_table(header: list[str], rows: list[list[str]]) -> None:
    widths = [max(len(x) for x in col) for col in zip(header, *rows, strict=False)]
    for line in [header, ["-" * w for w in widths], *rows]:
        print("  ".join(x.ljust(w) for x, w in zip(line, widths, strict=True)).rstrip())


# ---------------------------------------------------------------- commands


def cmd_report(args: argparse.Namespace, open_queue: OpenQueue) -> int:
    with open_queue(args) as conn:
        path = report.write_html(conn, args.html, args.hours)
    print(f"wrote {path}")
    return EXIT_OK


def cmd_history(args: argparse.Namespace, open_queue: OpenQueue) -> int:
    if (args.kind is None) == (args.run is None):
        print("tickq: history takes a KIND or --run ID", file=sys.stderr)
        return EXIT_CONFIG
    with open_queue(args) as conn:
        if args.run is not None:
            rows = _rows(conn, "run_detail", {"run_id": args.run})
            if not rows:
                print(f"tickq: no run {args.run}", file=sys.stderr)
                return EXIT_NO
            run = rows[0]
            if args.json:
                print(json.dumps(run, default=_json, indent=2))
                return EXIT_OK
            for key, value in run.items():
                if key != "output_tail":
                    print(f"{key:13} {_json(value) if value is not None else '-'}")
            print("output_tail:")
            sys.stdout.write(run["output_tail"] or "")
            return EXIT_OK
        try:
            rows = _rows(conn, "kind_history", {"kind": args.kind, "limit": args.limit})
        except psycopg.Error as exc:
            if exc.sqlstate == "TQ003":
                print(f"tickq: {exc.diag.message_primary}", file=sys.stderr)
                return EXIT_NO
            raise
    if args.json:
        print(json.dumps(rows, default=_json, indent=2))
        return EXIT_OK
    _print_table(
        ["run", "trigger", "try", "claimed (UTC)", "waited", "duration", "outcome", "exit",
         "slots"],
        [[str(r["run_id"]), r["run_trigger"], str(r["attempt"]), _when(r["claimed_at"]),
          _dur(r["waited"]), _dur(r["duration"]), r["outcome"],
          "-" if r["exit_code"] is None else str(r["exit_code"]), str(r["slots_merged"])]
         for r in rows],
    )
    return EXIT_OK


def cmd_upcoming(args: argparse.Namespace, open_queue: OpenQueue) -> int:
    with open_queue(args) as conn:
        rows = _rows(conn, "upcoming", {"hours": args.hours, "limit": args.limit})
    if args.json:
        print(json.dumps(rows, default=_json, indent=2))
        return EXIT_OK
    _print_table(
        ["due (UTC)", "kind", "lane", "trigger", "schedule"],
        [[_when(r["due_at"]), r["kind"], r["priority"], r["trigger"], r["schedule"]]
         for r in rows],
    )
    return EXIT_OK


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def make_server(
    host: str, port: int, render_page: Callable[[], str]
) -> ThreadingHTTPServer:
    """A read-only HTTP server: GET / is the page, re-rendered per request; all else is 404
    (405 for methods that would change something)."""

    class Handler(BaseHTTPRequestHandler):
        server_version = "tickq"
        sys_version = ""

        def _send(self, status: HTTPStatus, body: bytes, headers: dict[str, str]) -> None:
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def do_GET(self) -> None:  # noqa: N802 - the http.server spelling
            if self.path.split("?", 1)[0] not in ("/", "/index.html"):
                self._send(HTTPStatus.NOT_FOUND, b"not found\n",
                           {"Content-Type": "text/plain; charset=utf-8"})
                return
            try:
                body = render_page().encode("utf-8")
            except psycopg.Error as exc:
                message = f"the database did not answer: {exc.sqlstate or type(exc).__name__}\n"
                self._send(HTTPStatus.SERVICE_UNAVAILABLE, message.encode(),
                           {"Content-Type": "text/plain; charset=utf-8"})
                return
            self._send(HTTPStatus.OK, body, PAGE_HEADERS)

        do_HEAD = do_GET  # noqa: N815

        def _refuse(self) -> None:
            self._send(HTTPStatus.METHOD_NOT_ALLOWED, b"read-only\n",
                       {"Content-Type": "text/plain; charset=utf-8", "Allow": "GET, HEAD"})

        do_POST = do_PUT = do_DELETE = do_PATCH = _refuse  # noqa: N815

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            return  # one line per request would drown the terminal; nothing to audit here

    return ThreadingHTTPServer((host, port), Handler)


def cmd_serve(args: argparse.Namespace, open_queue: OpenQueue) -> int:
    # Only an address given on the command line can open the page beyond this machine.
    host = args.host or "127.0.0.1"
    open_queue(args).close()  # an unreachable database fails here, with its exit status

    def render_page() -> str:
        with open_queue(args) as page_conn:
            return report.render(report.collect(page_conn, args.hours))

    try:
        server = make_server(host, args.port, render_page)
    except OSError as exc:
        print(f"tickq: cannot listen on {host}:{args.port}: {exc.strerror}", file=sys.stderr)
        return EXIT_CONFIG
    bound_host, bound_port = server.server_address[:2]
    note = "" if _loopback(host) else " (not loopback: anyone who can reach it sees the queue)"
    print(f"serving the status page on http://{bound_host}:{bound_port}/{note}", flush=True)
    try:
        server.serve_forever(poll_interval=0.2)
    finally:
        server.server_close()
    return EXIT_OK


# ---------------------------------------------------------------- wiring


def add_commands(
    sub: argparse._SubParsersAction, common: argparse.ArgumentParser, open_queue: OpenQueue
) -> None:
    def add(name: str, func: Callable[..., int], text: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, parents=[common], help=text, description=text)
        p.set_defaults(func=lambda args: func(args, open_queue))
        return p

    rep = add("report", cmd_report, "write the status page as one self-contained HTML file")
    rep.add_argument("--html", required=True, metavar="FILE", help="where to write the page")
    rep.add_argument("--hours", type=_hours, default=24.0, help="window (default 24)")

    srv = add("serve", cmd_serve, "serve the status page, read-only, on 127.0.0.1")
    srv.add_argument("--port", type=int, default=8787, help="port (default 8787; 0: any free)")
    srv.add_argument(
        "--host", default=None,
        help="address to listen on (default 127.0.0.1; any other address must be given here)",
    )
    srv.add_argument("--hours", type=_hours, default=24.0, help="window (default 24)")

    his = add("history", cmd_history, "a kind's runs, newest first (or one run's whole output)")
    his.add_argument("kind", nargs="?", help="the kind")
    his.add_argument("--limit", type=_positive, default=20, help="runs to show (default 20)")
    his.add_argument("--run", type=int, metavar="ID", help="one run, with its whole output tail")
    his.add_argument("--json", action="store_true", help="print JSON")

    upc = add("upcoming", cmd_upcoming, "what falls due next, in order")
    upc.add_argument("--hours", type=_hours, default=24.0, help="how far ahead (default 24)")
    upc.add_argument("--limit", type=_positive, default=50, help="rows (default 50)")
    upc.add_argument("--json", action="store_true", help="print JSON")
