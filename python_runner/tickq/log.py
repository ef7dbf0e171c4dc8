"""One line per event on stdout: plain `key=value` text by default, JSON lines on request.

Every line carries a stable event name (``run.finished``, ``registry.drift``...) so that logs can
be grepped and parsed without reading the prose around them.
"""

from __future__ import annotations

import errno
import json
import os
import sys
import threading
from datetime import UTC, datetime
from typing import Any, TextIO

FORMATS = ("text", "json")
RESERVED = frozenset({"ts", "level", "event"})  # the keys of every JSON line


class EventLog:
    def __init__(self, fmt: str = "text", stream: TextIO | None = None) -> None:
        if fmt not in FORMATS:
            raise ValueError(f"log format must be one of {', '.join(FORMATS)}, got {fmt!r}")
        self.fmt = fmt
        self.stream = stream or sys.stdout
        self._lock = threading.Lock()
        self._closed = False

    def event(self, name: str, /, level: str = "info", **fields: Any) -> None:
        now = datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
        if self.fmt == "json":
            # A field never replaces the line's own keys: an alert's "event" stays the alert's.
            fields = {f"field_{k}" if k in RESERVED else k: v for k, v in fields.items()}
            line = json.dumps({"ts": now, "level": level, "event": name, **fields}, default=str)
        else:
            parts = [now, level.upper(), name]
            parts += [f"{k}={_text_value(v)}" for k, v in fields.items() if v is not None]
            line = " ".join(parts)
        with self._lock:
            if self._closed:
                return
            try:
                self.stream.write(line + "\n")
                self.stream.flush()
            except OSError as exc:
                # The reader went away (`tickq tick | head -2`): logging is not worth a run, so
                # the dispatcher goes on without its log rather than dying with claimed runs.
                if not isinstance(exc, BrokenPipeError) and exc.errno != errno.EPIPE:
                    raise
                self._closed = True
                discard_closed_pipe(self.stream)

    def warning(self, name: str, /, **fields: Any) -> None:
        self.event(name, level="warning", **fields)

    def error(self, name: str, /, **fields: Any) -> None:
        self.event(name, level="error", **fields)


def _text_value(value: Any) -> str:
    if isinstance(value, float):
        value = f"{value:.3f}"
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    if text == "" or any(c.isspace() or c in "\"=" for c in text):
        return json.dumps(text)
    return text


def discard_closed_pipe(stream: TextIO) -> None:
    """Point `stream`'s file descriptor at /dev/null after its reader closed the pipe, so the
    data still buffered in it cannot raise again when Python flushes it at exit (which would
    print "Exception ignored ... BrokenPipeError" on stderr)."""
    try:
        fd = stream.fileno()
    except (OSError, ValueError):
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, fd)
    finally:
        os.close(devnull)
