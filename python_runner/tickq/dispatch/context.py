"""What the rooms of a tick share: the registry, where the database is and how long to wait
for it, the log, the dispatcher's name, its stop event, grace and ledger.

One object, built once by the Dispatcher and handed to execute, chain, upkeep and alerts, so no
room needs the Dispatcher itself (and none imports tick.py).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

from tickq.db.api.tick import Claim
from tickq.db.connect import Link, Timeouts
from tickq.dispatch.pings import Pinger, end_suffix, tail_body
from tickq.host.ledger import Ledger
from tickq.host.process import RunResult, Watch
from tickq.host.spool import Spool
from tickq.host.stops import RunStop, Stop
from tickq.log import EventLog
from tickq.registry import Registry


class Context(NamedTuple):
    url: str
    registry: Registry
    log: EventLog
    name: str  # the dispatcher's, as leases and reports carry it
    stop_event: threading.Event
    grace: float  # seconds between SIGTERM and SIGKILL
    ledger: Ledger
    spool: Spool
    timeouts: Timeouts  # the registry's db_* settings, on every connection
    # The stop of each run this dispatcher holds, by run id: its shutdown or an operator's
    # cancel of that run (tickq.dispatch.cancel polls for them).
    stops: dict[int, RunStop]  # given: a default would be one dict shared by every Context
    report_attempts: int = 8  # connections tried before a report goes to the spool
    reconnect_delay: float = 0.5
    pinger: Pinger | None = None  # check-ins (dispatch/pings.py): each run's, the tick's

    def hold(self, claim: Claim) -> RunStop:
        """The stop of a run starting now, kept until `release`."""
        stop = self.stops[claim.run_id] = RunStop(self.stop_event)
        return stop

    def release(self, claim: Claim) -> None:
        self.stops.pop(claim.run_id, None)

    def stop_of(self, claim: Claim) -> Stop:
        """What stops `claim`'s command: its own stop when held, else the dispatcher's."""
        return self.stops.get(claim.run_id) or self.stop_event

    def ping_run(self, claim: Claim, suffix: str, body: bytes = b"") -> None:
        """Check a run of `claim`'s kind in at the kind's ping_url, if it has one."""
        kind = self.registry.kinds.get(claim.kind)
        if self.pinger is not None and kind is not None and kind.ping_url:
            self.pinger.send(kind.ping_url, suffix, body, kind=claim.kind,
                             run_id=str(claim.run_id))

    def ping_end(self, claim: Claim, result: RunResult) -> None:
        """Check a run's end in: `<url>`, `<url>/<exit status>` or `<url>/fail`, with the end
        of its output as the body."""
        self.ping_run(claim, end_suffix(result.outcome, result.exit_code),
                      tail_body(result.output_tail))

    @property
    def kept(self) -> Spool:
        """The reports this host's ticks keep after the database took them (dispatch/kept.py)."""
        return Spool(self.ledger.folder, "reported")

    @property
    def folder(self) -> Path:
        """The registry's folder: where relative commands and default working folders are."""
        return self.registry.path.resolve().parent

    def link(self) -> Link:
        """A connection of its own (the tick's, a run thread's, a chain's) with the registry's
        timeouts and the one reconnect loop."""
        return Link(self.url, self.timeouts, attempts=self.report_attempts,
                    delay=self.reconnect_delay, on_retry=self._retried)

    def labels(self, claim: Claim, **more: Any) -> dict[str, Any]:
        """What the ledger records of a run's command."""
        return {"kind": claim.kind, "run_id": claim.run_id, **more, "dispatcher": self.name}

    def watch(self, claim: Claim, timeout: float, on_output: Callable[[bytes], None] | None = None,
              **labels: Any) -> Watch:
        """How a command of `claim` is watched: its timeout, this dispatcher's grace, the run's
        stop, the ledger (with the run's labels and `labels`), `on_output` (tickq run)."""
        return Watch(timeout, self.grace, stop=self.stop_of(claim), ledger=self.ledger,
                     labels=self.labels(claim, **labels), on_output=on_output)

    def _retried(self, what: str, attempt: int, exc: Exception) -> None:
        self.log.warning("db.reconnect", doing=what, attempt=attempt, error=str(exc))
