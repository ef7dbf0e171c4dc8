"""A manual run (`tickq run KIND`, `tickq agent run NAME`): one kind through the claim path
as a tick (counted against the slots), its output handed on as it comes, an operator's cancel
honoured while it runs."""

from __future__ import annotations

import contextlib
import queue
from collections.abc import Callable
from typing import Any

from tickq.db.api.tick import NOT_ARMED, Claim
from tickq.db.errors import ClaimRefused, InvalidInput
from tickq.dispatch.cancel import Poller
from tickq.host.process import RunResult
from tickq.registry import AGENT_PREFIX


def run_now(
    d: Any, kind: str, on_output: Callable[[bytes], None] | None = None,
    confirm: Callable[[str], str | None] | None = None,
) -> tuple[Claim, RunResult]:
    """Run `kind` now with Dispatcher `d` (typed Any: this room does not import the one that
    imports it); `on_output` gets the command's output as it comes. When the database refuses
    the claim because the kind is irreversible and unarmed, `confirm` (given the refusal) names
    the person who confirmed the run, or refuses by raising."""
    d.stop_orphans()
    d._synced()
    d.replay_spool()
    if kind.startswith(AGENT_PREFIX) and d.registry.agents is None:
        # As a tick leaves it (tickq.claim_jobs): a run here could only fail.
        raise InvalidInput(
            f"{kind} is an agent, but {d.registry.path} has no [agents] section: run it "
            "from a registry that has one (or let a dispatcher whose registry has one claim "
            "it)")
    try:
        claim = d.claim_kind(kind)
    except ClaimRefused as exc:
        if exc.sqlstate != NOT_ARMED or confirm is None:
            raise
        claim = d.claim_kind(kind, run_by=confirm(str(exc)))
    results: queue.Queue[tuple[Claim, RunResult]] = queue.Queue()
    d._start(claim, results, on_output)
    cancels, done = Poller(d.ctx, d.link), None
    while done is None:  # a manual run may be cancelled too
        cancels.maybe()
        with contextlib.suppress(queue.Empty):
            done = results.get(timeout=0.2)
    result = done[1]
    d.report(claim, result)
    return claim, result

