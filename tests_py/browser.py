"""A real headless Chromium driven over the DevTools protocol on a pipe (`--remote-debugging-pipe`:
JSON messages ending in a NUL byte on fds 3 and 4), with nothing but the standard library.

The status page runs no script (its Content-Security-Policy forbids it); DevTools' own
`Runtime.evaluate` is not the page's script, so a test can measure what the browser laid out:
scrollWidth, an element's box, an SVG text's extent.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--hide-scrollbars", "--remote-debugging-pipe",
]


def chromium() -> str:
    path = os.environ.get("CHROMIUM") or shutil.which("chromium")
    # No skip: the page's promises are only proven in a browser (make test installs chromium).
    assert path, "chromium is not installed: run `make test` (scripts/chromium.sh installs it)"
    return path


def _high(fds: tuple[int, int]) -> tuple[int, int]:
    moved = tuple(fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10) for fd in fds)
    for fd in fds:
        os.close(fd)
    return moved  # type: ignore[return-value]


class Browser:
    """One Chromium with one tab of `width` x `height` CSS pixels."""

    def __init__(self, profile: Path, width: int = 1280, height: int = 900) -> None:
        # Chromium's ends go to fds 3 and 4 through bash (dash takes one-digit fds only),
        # moved above 9 first, so that neither redirection overwrites the other's source.
        to_chrome_r, self._to_chrome = _high(os.pipe())
        self._from_chrome, from_chrome_w = _high(os.pipe())
        self.proc = subprocess.Popen(
            ["bash", "-c", f'exec "$@" 3<&{to_chrome_r} 4>&{from_chrome_w}', "bash", chromium(),
             *FLAGS, f"--user-data-dir={profile}", f"--window-size={width},{height}",
             "about:blank"],
            pass_fds=(to_chrome_r, from_chrome_w), stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self._buffer = b""
        self._next_id = 0
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.call("Target.attachToTarget", targetId=target,
                                 flatten=True)["sessionId"]
        self.call("Emulation.setDeviceMetricsOverride", session=True, width=width,
                  height=height, deviceScaleFactor=1, mobile=False)

    def call(self, method: str, session: bool = False, **params: Any) -> dict[str, Any]:
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params}
        if session:
            message["sessionId"] = self.session
        os.write(self._to_chrome, json.dumps(message).encode() + b"\0")
        while True:
            answer = self._read()
            if answer.get("id") == self._next_id:
                assert "error" not in answer, (method, answer["error"])
                return answer["result"]

    def _read(self) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            chunk = os.read(self._from_chrome, 1 << 16)
            assert chunk, "chromium closed its DevTools pipe"
            self._buffer += chunk
        one, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(one)

    def open(self, page: Path) -> None:
        self.call("Page.navigate", session=True, url=page.as_uri())
        deadline = time.monotonic() + 60
        while self.value("document.readyState") != "complete":
            assert time.monotonic() < deadline, "the page never finished loading"
            time.sleep(0.05)

    def value(self, expression: str) -> Any:
        """What `expression` evaluates to in the page (DevTools' evaluation, not a page script)."""
        answer = self.call("Runtime.evaluate", session=True, expression=expression,
                           returnByValue=True)
        assert "exceptionDetails" not in answer, answer["exceptionDetails"]
        return answer["result"].get("value")

    def close(self) -> None:
        with contextlib.suppress(AssertionError, OSError):
            self.call("Browser.close")
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self._to_chrome)
        os.close(self._from_chrome)
