"""The `tickq report|serve` commands: the status page as a file, and over HTTP."""

from __future__ import annotations

import argparse
import ipaddress
import re
from collections.abc import Callable
from http import HTTPStatus

from tickq.cli import common
from tickq.db.api import session, status
from tickq.db.errors import EXIT_OK, InvalidInput, exit_of
from tickq.page import httpd, render

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


def _is_address(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def page_route(render_page: Callable[[], str],
               headers: dict[str, str] = PAGE_HEADERS) -> httpd.Route:
    """GET / (or /metrics, with its headers) as a route of the server: rendered per request,
    or 503 and one line when the database refuses or is down."""

    def answer() -> httpd.Answer:
        try:
            body = render_page().encode("utf-8")
        except Exception as exc:
            found = exit_of(exc)
            if found is None:  # not a database's answer: a bug, with its traceback
                raise
            return httpd.text_answer(HTTPStatus.SERVICE_UNAVAILABLE, _one_line(found[1]))
        return HTTPStatus.OK, headers, body

    return answer


def _one_line(lines: list[str]) -> str:
    # No host, port or role of the connection string: the page may be open beyond this machine.
    line = lines[0] if lines else "the database did not answer"
    line = re.sub(r'connection to server (at|on) .*? failed: ', "", line)
    return "".join(ch if ch.isprintable() else " " for ch in line)[:300]


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

    route = page_route(render_page)
    # A small table, path -> route: a new endpoint is one more line.
    routes = {"/": route, "/index.html": route,
              "/metrics": page_route(render_metrics, METRICS_HEADERS)}
    try:
        # A name given to --host is one of the bound address's names.
        names = [*(args.allowed_host or []), *([] if _is_address(host) else [host])]
        server = httpd.Server(host, args.port, routes, names)
    except OSError as exc:
        raise InvalidInput(f"cannot listen on {host}:{args.port}: {exc.strerror}") from None
    bound_host, bound_port = server.address
    bound_host = f"[{bound_host}]" if ":" in bound_host else bound_host
    note = "" if _loopback(host) else " (not loopback: anyone who can reach it sees the queue)"
    print(f"serving the status page on http://{bound_host}:{bound_port}/ and its metrics on "
          f"/metrics{note}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.close()
    return EXIT_OK
