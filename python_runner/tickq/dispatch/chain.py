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

from tickq.db.api import tick as api
from tickq.db.api.tick import Claim
from tickq.db.connect import Link
from tickq.db.errors import DatabaseRefused, DatabaseUnavailable
from tickq.dispatch.context import Context
from tickq.host import programs
from tickq.host.process import Command, RunResult, run_command
from tickq.host.stops import RunStop
from tickq.host.tail import MAX_TAIL_CHARS
from tickq.registry import Kind, Step

Output = Callable[[bytes], None] | None


def run_chain(
    ctx: Context, claim: Claim, kind: Kind, env: Mapping[str, str], cwd: Path | None,
    on_output: Output = None,
) -> RunResult:
    """Run the steps of `kind` for `claim` (from the step the database names) and return the
    chain's result: ok when every step ran and each failure was allowed to continue.
    `on_output` gets each step's output as it comes, step after step (`tickq run CHAIN`)."""
    started = time.monotonic()
    with ctx.link() as link:
        return _steps(ctx, link, claim, kind, env, cwd, started, on_output)


def _steps(
    ctx: Context, link: Link, claim: Claim, kind: Kind, env: Mapping[str, str],
    cwd: Path | None, started: float, on_output: Output,
) -> RunResult:
    deadline = started + kind.timeout
    try:
        first = link.retrying("chain_start", api.chain_start, claim.run_id, ctx.name)
    except (DatabaseUnavailable, DatabaseRefused) as exc:
        note = f"[tickq: cannot ask the database where the chain starts: {exc}; nothing was run]\n"
        return RunResult("failed", None, note, time.monotonic() - started, None)
    parts: list[str] = []
    outcome, exit_code, pid = "ok", 0, None
    for n, step in enumerate(kind.steps, start=1):
        if n < first:
            parts.append(f"[tickq: step {n} {step.name}: ended ok in an earlier try; resumed "
                         "after it]\n")
            continue
        left = deadline - time.monotonic()
        stop = ctx.stop_of(claim)
        if isinstance(stop, RunStop) and stop.cancelled:
            parts.append(f"[tickq: {stop.note()} before step {n} {step.name}; later steps not "
                         "started]\n")
            outcome, exit_code = "cancelled", None
            break
        if ctx.stop_event.is_set():
            parts.append(f"[tickq: interrupted by dispatcher shutdown before step {n} "
                         f"{step.name}; later steps not started]\n")
            outcome, exit_code = "interrupted", None
            break
        if left <= 0:
            parts.append(f"[tickq: chain timed out after {kind.timeout}s before step {n} "
                         f"{step.name}; later steps not started]\n")
            outcome, exit_code = "timeout", None
            break
        cut_by_chain = left < step.timeout
        result = _run_step(ctx, claim, kind, env, cwd, n, step, left, on_output)
        pid = result.pid
        parts.append(f"[tickq: step {n} {step.name}: {result.outcome}"
                     f" (exit {result.exit_code}, {result.duration:.1f}s)]\n{result.output_tail}")
        if not _report_step(ctx, link, claim, n, step, result):
            parts.append("[tickq: this step's result could not be recorded; later steps not "
                         "started]\n")
            outcome, exit_code = "failed", result.exit_code
            break
        if result.outcome == "ok":
            continue
        if result.outcome in ("interrupted", "cancelled"):
            outcome, exit_code = result.outcome, result.exit_code
            if result.outcome == "cancelled" and n < len(kind.steps):
                parts.append(f"[tickq: chain stopped at step {n} {step.name}; later steps not "
                             "started]\n")
            break
        if step.continue_on_failure and not (result.outcome == "timeout" and cut_by_chain):
            continue
        outcome, exit_code = result.outcome, result.exit_code
        if result.outcome == "timeout" and cut_by_chain:
            parts.append(f"[tickq: chain timed out after {kind.timeout}s in step {n} "
                         f"{step.name}]\n")
        if n < len(kind.steps):
            parts.append(f"[tickq: chain stopped at step {n} {step.name}; later steps not "
                         "started]\n")
        break
    tail = "".join(p if p.endswith("\n") else p + "\n" for p in parts)
    return RunResult(outcome, exit_code, tail[-MAX_TAIL_CHARS:], time.monotonic() - started, pid)  # type: ignore[arg-type]


def _run_step(
    ctx: Context, claim: Claim, kind: Kind, env: Mapping[str, str], cwd: Path | None, n: int,
    step: Step, left: float, on_output: Output,
) -> RunResult:
    """One step under its own watchdog, never longer than the chain has left. It starts by
    the one rule every command does (tickq.host.programs)."""
    start = programs.resolve(step.command, ctx.folder, step.cwd or cwd, {**kind.env, **step.env})
    step_env = {**env, **step.env, "TICKQ_STEP": step.name, "TICKQ_STEP_N": str(n)}
    return run_command(Command(start.argv, start.cwd, step_env),
                       ctx.watch(claim, min(step.timeout, left), on_output, step=step.name))


def _report_step(
    ctx: Context, link: Link, claim: Claim, n: int, step: Step, result: RunResult
) -> bool:
    """Record a step's result (tickq.report_step); False when it could not be."""
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
