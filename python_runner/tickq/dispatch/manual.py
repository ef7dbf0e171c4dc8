"""A manual run (`tickq run KIND`, `tickq agent run NAME`): one kind through the claim path
as a tick (counted against the slots), its output handed on as it comes, an operator's cancel
honoured while it runs."""

from __future__ import annotations

import contextlib
import queue
from collections.abc import Callable
from typing import Protocol

from tickq.db.api.registry import Drift
from tickq.db.api.tick import NOT_ARMED, Claim
from tickq.db.connect import Link
from tickq.db.errors import ClaimRefused, InvalidInput
from tickq.dispatch.cancel import Poller
from tickq.dispatch.context import Context
from tickq.dispatch.loop import Results
from tickq.dispatch.report import report_alone
from tickq.host.process import RunResult
from tickq.registry import AGENT_PREFIX

Output = Callable[[bytes], None] | None


class Manual(Protocol):
    """What a manual run asks of the dispatcher (tickq.dispatch.tick.Dispatcher)."""

    ctx: Context
    link: Link

    def stop_orphans(self) -> int:
        """Stop the command groups of dead dispatchers on this host."""

    def synced(self) -> list[Drift]:
        """Make the queue match the registry (once per dispatcher)."""

    def replay_spool(self) -> int:
        """Report the results this host kept while the database was away."""

    def claim_manual(self, kind: str, run_by: str | None = None) -> Claim:
        """Claim `kind` now (tickq.claim_manual)."""

    def start(self, claim: Claim, results: Results, on_output: Output = None) -> None:
        """Start `claim`'s run in a thread of its own, which puts (claim, result) in `results`."""


def run_now(
    d: Manual, kind: str, on_output: Output = None,
    confirm: Callable[[str], str | None] | None = None,
) -> tuple[Claim, RunResult]:
    """Run `kind` now with dispatcher `d`; `on_output` gets the command's output as it comes.
    When the database refuses the claim because the kind is irreversible and unarmed,
    `confirm` (given the refusal) names the person who confirmed the run, or refuses by
    raising."""
    d.stop_orphans()
    d.synced()
    d.replay_spool()
    registry = d.ctx.registry
    if kind.startswith(AGENT_PREFIX) and registry.agents is None:
        # As a tick leaves it (tickq.claim_jobs): a run here could only fail.
        raise InvalidInput(
            f"{kind} is an agent, but {registry.path} has no [agents] section: run it "
            "from a registry that has one (or let a dispatcher whose registry has one claim "
            "it)")
    try:
        claim = d.claim_manual(kind)
    except ClaimRefused as exc:
        if exc.sqlstate != NOT_ARMED or confirm is None:
            raise
        claim = d.claim_manual(kind, run_by=confirm(str(exc)))
    results: Results = queue.Queue()
    d.start(claim, results, on_output)
    cancels, done = Poller(d.ctx, d.link), None
    while done is None:  # a manual run may be cancelled too
        cancels.maybe()
        with contextlib.suppress(queue.Empty):
            done = results.get(timeout=0.2)
    result = done[1]
    report_alone(d.ctx, d.link, claim, result)
    return claim, result

