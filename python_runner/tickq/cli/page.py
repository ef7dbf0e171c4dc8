"""The `tickq report|serve` commands: the status page as a file, and over HTTP."""

from __future__ import annotations

import argparse
import ipaddress
from collections.abc import Callable
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tickq.cli import common
from tickq.db.api import session, status
from tickq.db.errors import EXIT_OK, InvalidInput, exit_of
from tickq.page import render

PAGE_HEADERS = {
    "Content-Type": "text/html; charset=utf-8",
    # The page holds job output, which is untrusted: no script, no remote load, no framing.
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


MAX_PORT = 65535
METRICS_HEADERS = {
    "Content-Type": "text/plain; version=0.0.4; charset=utf-8",  # Prometheus's text format
    "Cache-Control": "no-store",
}


def cmd_report(args: argparse.Namespace) -> int:
    render.html_target(args.html)  # a path that cannot take the page fails before the database
    with common.open_queue(args) as conn:
        path = render.write_html(conn, args.html, args.hours)
    print(f"wrote {path}")
    return EXIT_OK


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def make_server(
    host: str, port: int, render_page: Callable[[], str],
    render_metrics: Callable[[], str] | None = None,
) -> ThreadingHTTPServer:
    """A read-only HTTP server: GET / is the page, re-rendered per request, GET /metrics the
    Prometheus metrics; all else is 404 (405 for methods that would change something)."""
    routes: dict[str, tuple[Callable[[], str], dict[str, str]]] = {
        "/": (render_page, PAGE_HEADERS), "/index.html": (render_page, PAGE_HEADERS)}
    if render_metrics is not None:
        routes["/metrics"] = (render_metrics, METRICS_HEADERS)

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
            route = routes.get(self.path.split("?", 1)[0])
            if route is None:
                self._send(HTTPStatus.NOT_FOUND, b"not found\n",
                           {"Content-Type": "text/plain; charset=utf-8"})
                return
            answer, headers = route
            try:
                body = answer().encode("utf-8")
            except Exception as exc:
                if exit_of(exc) is None:  # not a database's answer: a bug, with its traceback
                    raise
                # The SQLSTATE only: the page may be open beyond this machine.
                cause = getattr(exc, "sqlstate", None) or type(exc).__name__
                message = f"the database did not answer: {cause}\n"
                self._send(HTTPStatus.SERVICE_UNAVAILABLE, message.encode(),
                           {"Content-Type": "text/plain; charset=utf-8"})
                return
            self._send(HTTPStatus.OK, body, headers)

        do_HEAD = do_GET  # noqa: N815

        def _refuse(self) -> None:
            self._send(HTTPStatus.METHOD_NOT_ALLOWED, b"read-only\n",
                       {"Content-Type": "text/plain; charset=utf-8", "Allow": "GET, HEAD"})

        do_POST = do_PUT = do_DELETE = do_PATCH = _refuse  # noqa: N815

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            return  # one line per request would drown the terminal; nothing to audit here

    return ThreadingHTTPServer((host, port), Handler)


def cmd_serve(args: argparse.Namespace) -> int:
    # Only an address given on the command line can open the page beyond this machine.
    host = args.host or "127.0.0.1"
    if not 0 <= args.port <= MAX_PORT:
        raise InvalidInput(f"--port must be from 0 to {MAX_PORT} (0: any free port), "
                           f"got {args.port}")
    url, timeouts = common.url(args), common.timeouts(args)
    session.open_queue(url, timeouts).close()  # an unreachable database fails here

    def render_page() -> str:
        with session.open_queue(url, timeouts) as page_conn:
            return render.render(render.collect(page_conn, args.hours))

    def render_metrics() -> str:
        with session.open_queue(url, timeouts) as metrics_conn:
            return status.metrics_text(metrics_conn)

    try:
        server = make_server(host, args.port, render_page, render_metrics)
    except OSError as exc:
        raise InvalidInput(f"cannot listen on {host}:{args.port}: {exc.strerror}") from None
    bound_host, bound_port = server.server_address[:2]
    note = "" if _loopback(host) else " (not loopback: anyone who can reach it sees the queue)"
    print(f"serving the status page on http://{bound_host}:{bound_port}/ and its metrics on "
          f"/metrics{note}", flush=True)
    try:
        server.serve_forever(poll_interval=0.2)
    finally:
        server.server_close()
    return EXIT_OK
