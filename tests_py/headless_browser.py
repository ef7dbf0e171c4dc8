"""A real headless Chromium for the page tests (Debian's `chromium`; `make test` installs it):
the page loaded from a file, the DOM it ended with read back, and a local HTTP server that
counts every request (a page that shows untrusted text must make none)."""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
from html.parser import HTMLParser
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--hide-scrollbars",
]


class Beacon:
    """A local HTTP server that counts every request: the page must make none."""

    def __init__(self) -> None:
        self.requests: list[str] = []
        beacon = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802
                beacon.requests.append(self.path)
                self.send_response(200)
                self.end_headers()

            def log_message(self, *_args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def chromium() -> str:
    path = os.environ.get("CHROMIUM") or shutil.which("chromium")
    # No skip: the page's promises are only proven in a browser (make test installs chromium).
    assert path, "chromium is not installed: run `make test` (scripts/chromium.sh installs it)"
    return path


def browse(page: Path, profile: Path, *mode: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [chromium(), *CHROMIUM_FLAGS, f"--user-data-dir={profile}", "--virtual-time-budget=3000",
         *mode, page.as_uri()],
        capture_output=True, text=True, timeout=120,
    )


class Dom(HTMLParser):
    """Elements as (tag, attributes, own text) plus the text inside each <pre>."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, dict[str, str]]] = []
        self.pre_text: list[str] = []
        self.title = ""
        self._in: list[str] = []
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, {k: v or "" for k, v in attrs}))
        self._in.append(tag)
        if tag == "pre":
            self.pre_text.append("")

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, {k: v or "" for k, v in attrs}))

    def handle_endtag(self, tag: str) -> None:
        while self._in and self._in.pop() != tag:
            pass

    def handle_data(self, data: str) -> None:
        if "pre" in self._in:
            self.pre_text[-1] += data
        if self._in[-1:] == ["title"] and "svg" not in self._in:
            self.title += data

    def find(self, tag: str, **attrs: str) -> list[dict[str, str]]:
        """Elements of `tag` whose attributes hold each value (class_="bar": one of its words)."""

        def holds(a: dict[str, str], key: str, value: str) -> bool:
            return value in a.get(key.rstrip("_"), "").split()

        return [a for t, a in self.elements
                if t == tag and all(holds(a, k, v) for k, v in attrs.items())]
