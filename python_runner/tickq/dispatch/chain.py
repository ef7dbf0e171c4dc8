"""A chain: one kind whose steps run one after another under one claim, one slot and one lease.

Each step runs under its own watchdog (its `timeout`), and the chain's timeout bounds the whole:
a step never gets more time than the chain has left. The chain stops at the first step that
fails or times out, unless the step says `continue_on_failure`; a step cut short by the chain's
own timeout always stops it, and so does a cancel (`tickq cancel`): the current step is stopped
and the later ones are not started. Each step's result is recorded through `tickq.report_step`, and
where a retry starts is the database's answer (`tickq.chain_start`), on a connection of the
chain's own: the dispatcher's connection belongs to its main thread.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import NamedTuple

from tickq.db.api import tick as api
from tickq.db.api.tick import Claim
from tickq.db.connect import Link
from tickq.db.errors import DatabaseRefused, DatabaseUnavailable
from tickq.dispatch.context import Context
from tickq.host import programs
from tickq.host.process import Command, Outcome, RunResult, run_command
from tickq.host.stops import RunStop
from tickq.host.tail import MAX_TAIL_CHARS
from tickq.registry import Kind, Step

Output = Callable[[bytes], None] | None


class Verdict(NamedTuple):
    """The chain's decision at one step: run it (`run`, before it), or not; end the chain here
    (`end`, with the step's or the chain's exit code), or go on; `note`, lines for the chain's
    output, each ending in a newline."""

    run: bool = False
    end: Outcome | None = None
    exit_code: int | None = None
    note: str = ""


def before_step(
    n: int, step: Step, *, first: int, cancel: str | None, shutting_down: bool, left: float,
    chain_timeout: int,
) -> Verdict:
    """Whether step `n` runs: not when an earlier try of the run ended it ok (`first`, where the
    database says the chain starts), nor when a cancel (`cancel`, its note), a shutdown or the
    chain's own timeout (`left` seconds of it) came first: those end the chain."""
    where = f"step {n} {step.name}"
    if n < first:
        return Verdict(note=f"[tickq: {where}: ended ok in an earlier try; resumed after it]\n")
    if cancel is not None:
        return Verdict(end="cancelled",
                       note=f"[tickq: {cancel} before {where}; later steps not started]\n")
    if shutting_down:
        return Verdict(end="interrupted", note=f"[tickq: interrupted by dispatcher shutdown "
                                               f"before {where}; later steps not started]\n")
    if left <= 0:
        return Verdict(end="timeout", note=f"[tickq: chain timed out after {chain_timeout}s "
                                           f"before {where}; later steps not started]\n")
    return Verdict(run=True)


def after_step(
    n: int, step: Step, steps: int, result: RunResult, *, recorded: bool, left: float,
    chain_timeout: int,
) -> Verdict:
    """Whether the chain goes on after step `n` of `steps` ended with `result`. It stops at a
    step whose result could not be `recorded`, at a cancel or a shutdown, and at a failure or
    timeout, unless the step may continue on failure and it was not the chain's own timeout
    that cut it short (`left`: what the chain had left when the step started)."""
    stopped = (f"[tickq: chain stopped at step {n} {step.name}; later steps not started]\n"
               if n < steps else "")
    if not recorded:
        return Verdict(end="failed", exit_code=result.exit_code, note=(
            "[tickq: this step's result could not be recorded; later steps not started]\n"))
    if result.outcome == "ok":
        return Verdict()
    if result.outcome in ("interrupted", "cancelled"):
        return Verdict(end=result.outcome, exit_code=result.exit_code,
                       note=stopped if result.outcome == "cancelled" else "")
    cut_by_chain = result.outcome == "timeout" and left < step.timeout
    if step.continue_on_failure and not cut_by_chain:
        return Verdict()
    timed_out = (f"[tickq: chain timed out after {chain_timeout}s in step {n} {step.name}]\n"
                 if cut_by_chain else "")
    return Verdict(end=result.outcome, exit_code=result.exit_code, note=timed_out + stopped)


class _Chain(NamedTuple):
    """One run of a chain: what every step of it shares."""

    ctx: Context
    claim: Claim
    kind: Kind
    env: Mapping[str, str]
    cwd: Path | None
    on_output: Output


def run_chain(
    ctx: Context, claim: Claim, kind: Kind, env: Mapping[str, str], cwd: Path | None,
    on_output: Output = None,
) -> RunResult:
    """Run the steps of `kind` for `claim` (from the step the database names) and return the
    chain's result: ok when every step ran and each failure was allowed to continue.
    `on_output` gets each step's output as it comes, step after step (`tickq run CHAIN`)."""
    started = time.monotonic()
    with ctx.link() as link:
        return _steps(_Chain(ctx, claim, kind, env, cwd, on_output), link, started)


def _steps(chain: _Chain, link: Link, started: float) -> RunResult:
    ctx, claim, kind = chain.ctx, chain.claim, chain.kind
    deadline = started + kind.timeout
    try:
        first = link.retrying("chain_start", api.chain_start, claim.run_id, ctx.name)
    except (DatabaseUnavailable, DatabaseRefused) as exc:
        note = f"[tickq: cannot ask the database where the chain starts: {exc}; nothing was run]\n"
        return RunResult("failed", None, note, time.monotonic() - started, None)
    parts: list[str] = []
    outcome, exit_code, pid = "ok", 0, None
    for n, step in enumerate(kind.steps, start=1):
        left = deadline - time.monotonic()
        stop = ctx.stop_of(claim)
        verdict = before_step(
            n, step, first=first, left=left, chain_timeout=kind.timeout,
            cancel=stop.note() if isinstance(stop, RunStop) and stop.cancelled else None,
            shutting_down=ctx.stop_event.is_set())
        if verdict.run:
            result = _run_step(chain, n, step, left)
            pid = result.pid
            parts.append(f"[tickq: step {n} {step.name}: {result.outcome}"
                         f" (exit {result.exit_code}, {result.duration:.1f}s)]\n"
                         f"{result.output_tail}")
            verdict = after_step(n, step, len(kind.steps), result, left=left,
                                 recorded=_report_step(chain, link, n, step, result),
                                 chain_timeout=kind.timeout)
        if verdict.note:
            parts.append(verdict.note)
        if verdict.end is not None:
            outcome, exit_code = verdict.end, verdict.exit_code
            break
    tail = "".join(p if p.endswith("\n") else p + "\n" for p in parts)
    return RunResult(outcome, exit_code, tail[-MAX_TAIL_CHARS:], time.monotonic() - started, pid)  # type: ignore[arg-type]


def _run_step(chain: _Chain, n: int, step: Step, left: float) -> RunResult:
    """One step under its own watchdog, never longer than the chain has left. It starts by
    the one rule every command does (tickq.host.programs)."""
    ctx, kind = chain.ctx, chain.kind
    start = programs.resolve(step.command, ctx.folder, step.cwd or chain.cwd,
                             {**kind.env, **step.env})
    env = {**chain.env, **step.env, "TICKQ_STEP": step.name, "TICKQ_STEP_N": str(n)}
    return run_command(Command(start.argv, start.cwd, env),
                       ctx.watch(chain.claim, min(step.timeout, left), chain.on_output,
                                 step=step.name))


def _report_step(chain: _Chain, link: Link, n: int, step: Step, result: RunResult) -> bool:
    """Record a step's result (tickq.report_step); False when it could not be."""
    ctx, claim = chain.ctx, chain.claim
    fields = {"kind": claim.kind, "run_id": claim.run_id, "step": step.name, "n": n,
              "outcome": result.outcome, "exit_code": result.exit_code,
              "duration_s": round(result.duration, 3)}
    try:
        link.retrying("report_step", api.report_step, run_id=claim.run_id, dispatcher=ctx.name,
                      n=n, name=step.name, outcome=result.outcome, exit_code=result.exit_code,
                      output_tail=result.output_tail, duration=result.duration)
    except (DatabaseUnavailable, DatabaseRefused) as exc:
        # Refused (the lease is gone: TQ001) or the database is away: the step's result goes
        # to the log whole, and no further step starts without a record of this one.
        ctx.log.error("chain.step_unreported", **fields, sqlstate=getattr(exc, "sqlstate", None),
                      error=str(exc).strip(), output_tail=result.output_tail[-2000:])
        return False
    ctx.log.event("chain.step", level="info" if result.outcome == "ok" else "warning", **fields)
    return True
