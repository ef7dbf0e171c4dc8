"""Cancels: an operator's `tickq cancel` is a row in the database (tickq.request_cancel); the
dispatcher holding the run asks for them every POLL_EVERY seconds while its runs go on
(tickq.cancels_requested, which also tells `tickq cancel` that this dispatcher is alive) and
sets the run's own stop: run_command then stops the whole process tree as the watchdog does,
and the run is reported `cancelled`."""

from __future__ import annotations

import time

from tickq.db.api import tick as api
from tickq.db.connect import Link
from tickq.db.errors import DatabaseRefused, DatabaseUnavailable
from tickq.dispatch.context import Context

# Seconds between asks while runs go on: well within the 10 seconds a cancel may take, and
# `tickq cancel` calls a dispatcher not heard from for 30 seconds not seen.
POLL_EVERY = 2.0


class Poller:
    """Asks at most once every POLL_EVERY seconds, for the runs the context holds."""

    def __init__(self, ctx: Context, link: Link) -> None:
        self.ctx, self.link = ctx, link
        self.last = 0.0

    def maybe(self) -> None:
        if time.monotonic() - self.last < POLL_EVERY:
            return
        self.last = time.monotonic()
        poll(self.ctx, self.link)


def poll(ctx: Context, link: Link) -> int:
    """Set the stop of each held run whose cancel was asked; how many were newly cancelled."""
    held = list(ctx.stops)
    if not held:
        return 0
    try:
        asked = link.call(api.cancels_requested, ctx.name, held)
    except (DatabaseUnavailable, DatabaseRefused) as exc:
        ctx.log.warning("cancel.poll_failed", error=str(exc).strip())
        return 0
    count = 0
    for request in asked:
        stop = ctx.stops.get(request.run_id)
        if stop is None or stop.is_set():
            continue
        ctx.log.warning("run.cancelling", run_id=request.run_id, by=request.cancel_by,
                        reason=request.cancel_reason)
        stop.cancel(request.cancel_by, request.cancel_reason)
        count += 1
    return count
