"""What stops a running command: the dispatcher's stop event (a shutdown, carrying the signal
that asked) and one run's own stop (an operator's cancel of that run alone). run_command
watches either; a command is sent the signal the stop carries, then SIGKILL after the grace."""

from __future__ import annotations

import signal
import threading


class StopEvent(threading.Event):
    """Set when the dispatcher must stop. Remembers the signal that asked, so running commands
    get the same one (Ctrl-C's SIGINT, launchd's or systemd's SIGTERM)."""

    signum: signal.Signals = signal.SIGTERM

    def stop(self, signum: int) -> None:
        self.signum = signal.Signals(signum)
        self.set()


class RunStop:
    """One run's stop: the dispatcher's own (a shutdown: the run is interrupted) or an
    operator's cancel of this run alone (`tickq cancel`: the run is cancelled). Watched by
    run_command as a stop event is; a cancel sends SIGTERM, then SIGKILL after the grace."""

    def __init__(self, dispatcher: threading.Event) -> None:
        self.dispatcher = dispatcher
        self._cancel = threading.Event()
        self.by: str | None = None
        self.reason: str | None = None

    def cancel(self, by: str | None, reason: str | None) -> None:
        self.by, self.reason = by, reason
        self._cancel.set()

    @property
    def cancelled(self) -> bool:
        return self._cancel.is_set() and not self.dispatcher.is_set()

    @property
    def signum(self) -> signal.Signals:
        return getattr(self.dispatcher, "signum", signal.SIGTERM) if self.dispatcher.is_set() \
            else signal.SIGTERM

    def is_set(self) -> bool:
        return self._cancel.is_set() or self.dispatcher.is_set()

    def wait(self, timeout: float) -> bool:
        return self._cancel.wait(timeout) or self.dispatcher.is_set()

    def note(self) -> str:
        why = f": {self.reason}" if self.reason else ""
        return f"cancelled by {self.by or 'an operator'}{why}"


Stop = threading.Event | RunStop
