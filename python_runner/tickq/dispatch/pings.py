"""Check-ins for an outside dead-man watcher, in the healthchecks.io protocol (Cronitor, Sentry's
cron monitors and others take it too): a POST to `<url>/start`, then `<url>` for success,
`<url>/fail` or `<url>/<exit status>` for failure, the end of the output as the body.

A check-in never fails a tick and never holds one long: each goes out on a sender thread of its
URL (so a URL's check-ins keep their order and a dead receiver holds up only its own), waits at
most `ping_timeout` for its answer and is tried at most twice; a failure is one log line. When the
tick is done, `close` waits for what is still queued no longer than two timeouts and drops the
rest with one line. A URL is a secret (its path is the check's key): no line names more of it
than its scheme and host.

No redirect is followed, to the same origin or any other: a 3xx answer is a failed check-in,
logged with the status and the target's scheme and host, so a receiver (or whoever answers for
its name) cannot send every dispatcher host to another host or port of its network, nor to
another scheme. A URL's `user:password@` goes as an `Authorization: Basic` header, never into
the host name urllib would look up.
"""

from __future__ import annotations

import base64
import queue
import threading
import time
from typing import Any
from urllib.parse import unquote, urljoin, urlsplit, urlunsplit

from tickq.log import EventLog

TEXT = "text/plain; charset=utf-8"
BODY_BYTES = 10_000  # the end of the output a check-in carries (healthchecks.io keeps 10 kB)
ATTEMPTS = 2  # a check-in is tried at most twice


def shown(url: str) -> str:
    """What a log line may say of a check-in URL: its scheme and host, never its path."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.hostname or '?'}/…"


def without_userinfo(url: str) -> tuple[str, dict[str, str]]:
    """`url` without its `user:password@` and the header that carries them instead (RFC 7617
    Basic, percent-escapes decoded as RFC 3986 writes them), or `url` and no header."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url, {}
    userinfo, _, host = parts.netloc.rpartition("@")
    user, _, password = userinfo.partition(":")
    token = base64.b64encode(f"{unquote(user)}:{unquote(password)}".encode()).decode("ascii")
    return urlunsplit(parts._replace(netloc=host)), {"Authorization": f"Basic {token}"}


def end_suffix(outcome: str, exit_code: int | None) -> str:
    """How a run's end is checked in: `` for ok, `/<exit status>` for a command that exited
    non-zero, `/fail` for a timeout, an interruption or a command that never started, `/log`
    (an entry in the check's log that changes nothing) for a run an operator cancelled."""
    if outcome == "ok":
        return ""
    if outcome == "cancelled":
        return "/log"
    if outcome == "failed" and exit_code is not None and 0 < exit_code < 256:
        return f"/{exit_code}"
    return "/fail"


def tail_body(text: str) -> bytes:
    """The end of a run's output, at most BODY_BYTES of UTF-8 (cut at a character)."""
    data = text.encode("utf-8", "replace")
    return data[-BODY_BYTES:].decode("utf-8", "ignore").encode("utf-8")


Item = tuple[str, bytes, str, dict[str, str]]  # suffix, body, content type, log labels


class Pinger:
    """The check-ins of one tick (or one manual run)."""

    def __init__(self, log: EventLog, timeout: float) -> None:
        self.log, self.timeout = log, timeout
        self._queues: dict[str, queue.Queue[Item | None]] = {}
        self._threads: list[threading.Thread] = []
        self._lock = threading.Lock()

    def send(self, url: str | None, suffix: str = "", body: bytes = b"", *,
             content_type: str = TEXT, **labels: str) -> None:
        """Queue a POST to `url + suffix` (nothing for no URL); it goes out in order."""
        if not url:
            return
        with self._lock:
            line = self._queues.get(url)
            if line is None:
                line = self._queues[url] = queue.Queue()
                thread = threading.Thread(target=self._sender, args=(url, line), daemon=True,
                                          name="ping")
                thread.start()
                self._threads.append(thread)
        line.put((suffix, body, content_type, labels))

    def close(self) -> None:
        """Wait for the queued check-ins, at most two timeouts in all; drop the rest."""
        with self._lock:
            lines, threads = list(self._queues.values()), list(self._threads)
        for line in lines:
            line.put(None)
        deadline = time.monotonic() + ATTEMPTS * self.timeout + 0.5
        for thread in threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        busy = sum(t.is_alive() for t in threads)
        if busy:  # their check-ins are given up: the process does not wait for daemon threads
            self.log.warning("ping.dropped", urls=busy, bound_s=ATTEMPTS * self.timeout)

    def _sender(self, url: str, line: queue.Queue[Item | None]) -> None:
        while (item := line.get()) is not None:
            self._post(url, *item)

    def _post(self, url: str, suffix: str, body: bytes, content_type: str,
              labels: dict[str, str]) -> None:
        import urllib.error  # only once a ping is sent: not on every wake-up

        opener = _opener()
        target, auth = without_userinfo(url.rstrip("/") + suffix)
        error = ""
        for _attempt in range(ATTEMPTS):
            request = _request(target, body, {"Content-Type": content_type, **auth})
            try:
                with opener.open(request, timeout=self.timeout) as answer:
                    answer.read(1024)
                return
            except urllib.error.HTTPError as exc:
                error = f"HTTP {exc.code}"
                if 300 <= exc.code < 400:
                    moved = urljoin(target, exc.headers.get("Location") or "")
                    error += f": redirect to {shown(moved)} not followed"
                if exc.code < 500:
                    break  # the receiver refused it: asking again would not help
            except (OSError, ValueError) as exc:  # no answer in time, refused, unreachable
                reason = getattr(exc, "reason", None) or exc
                error = type(reason).__name__ if isinstance(reason, BaseException) else "error"
                text = str(reason).replace(url, shown(url)).replace(target, shown(target))
                error = f"{error}: {text}"[:200]
        self.log.warning("ping.failed", url=shown(url), check=suffix or "/", error=error,
                         **labels)


def _request(url: str, body: bytes, headers: dict[str, str]) -> Any:
    import urllib.request

    return urllib.request.Request(url, data=body, method="POST",
                                  headers={**headers, "User-Agent": "tickq"})


def _opener() -> Any:
    """urllib's opener with a redirect handler that follows nothing: the 3xx comes back as an
    HTTPError, which `_post` logs."""
    import urllib.request

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *_args: Any) -> None:
            return None

    return urllib.request.build_opener(NoRedirect)
