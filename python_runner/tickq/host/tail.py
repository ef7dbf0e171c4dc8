"""A command's output as tickq keeps it: the last bytes read from its pipe (a reader thread per
command, bounded), decoded, with a header when the front was cut and tickq's notes after it, at
most MAX_TAIL_CHARS in all (the database's bound on a run's output tail)."""

from __future__ import annotations

import os
import selectors
import threading
import time
from collections.abc import Callable

READ_CHUNK = 65536
MAX_TAIL_CHARS = 65536  # job_run.output_tail's bound (domain tickq.output_tail)


def compose(dropped: int, text: str, notes: list[str]) -> str:
    """The output tail as stored: a header when the front was cut, the output, tickq's notes;
    at most MAX_TAIL_CHARS in all. The database keeps the right-most characters of a longer
    text, which would cut the header off, so the output's front gives way here instead."""
    ending = "" if not notes else (
        ("" if not text or text.endswith("\n") else "\n") + "\n".join(notes) + "\n")
    while True:
        header = f"[... {dropped} bytes omitted ...]\n" if dropped else ""
        excess = len(header) + len(text) + len(ending) - MAX_TAIL_CHARS
        if excess <= 0:
            return header + text + ending
        cut, text = text[:excess], text[excess:]
        dropped += len(cut.encode("utf-8", errors="replace"))
        if not text:
            return (header + ending)[-MAX_TAIL_CHARS:]


class Reader:
    """Read a pipe in a thread, keeping only the last `limit` bytes."""

    def __init__(
        self, fd: int, limit: int, on_output: Callable[[bytes], None] | None = None
    ) -> None:
        self._fd = fd
        self._on_output = on_output
        self._limit = max(limit, 0)
        self._buf = bytearray()
        self._dropped = 0
        self._stop_at: float | None = None
        self._thread = threading.Thread(target=self._run, name=f"tickq-reader-{fd}", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def finish(self, drain: float) -> None:
        """Stop at end of file or after `drain` more seconds, whichever comes first: a process
        that escaped the group may hold the pipe open forever."""
        self._stop_at = time.monotonic() + drain
        self._thread.join()

    def _run(self) -> None:
        with selectors.DefaultSelector() as selector:
            selector.register(self._fd, selectors.EVENT_READ)
            while self._stop_at is None or time.monotonic() < self._stop_at:
                if not selector.select(timeout=0.1):
                    continue
                try:
                    chunk = os.read(self._fd, READ_CHUNK)
                except OSError:
                    return
                if not chunk:
                    return
                self._keep(chunk)
                if self._on_output is not None:
                    try:
                        self._on_output(chunk)
                    except Exception:  # noqa: BLE001 - the tail is kept whatever the viewer does
                        self._on_output = None

    def _keep(self, chunk: bytes) -> None:
        self._buf += chunk
        excess = len(self._buf) - self._limit
        if excess > 0:
            del self._buf[:excess]
            self._dropped += excess

    def parts(self) -> tuple[int, str]:
        """Bytes dropped from the front, and the tail decoded (bad bytes replaced). NUL becomes
        U+FFFD so the text fits a PostgreSQL `text` column."""
        data = bytes(self._buf)
        dropped = self._dropped
        if dropped:
            # Do not start in the middle of a UTF-8 character.
            skip = 0
            while skip < min(3, len(data)) and 0x80 <= data[skip] <= 0xBF:
                skip += 1
            data, dropped = data[skip:], dropped + skip
        return dropped, data.decode("utf-8", errors="replace").replace("\0", "\ufffd")
