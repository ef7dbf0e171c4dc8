"""A chain: one kind whose steps run one after another under one claim, one slot and one lease.

Each step runs under its own watchdog (its `timeout`), and the chain's timeout bounds the whole:
a step never gets more time than the chain has left. The chain stops at the first step that
fails or times out, unless the step says `continue_on_failure`; a step cut short by the chain's
own timeout always stops it. Each step's result is recorded through `tickq.report_step`, and
where a retry starts is the database's answer (`tickq.chain_start`), on a connection of the
chain's own: the dispatcher's connection belongs to its main thread.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import psycopg

from tickq import db
from tickq.host import programs
from tickq.host.process import RunResult, run_command
from tickq.registry import Kind

if TYPE_CHECKING:
    from tickq.dispatch.tick import Claim, Dispatcher


class _Link:
    """A connection for one chain's queries, reconnected a bounded number of times."""

    def __init__(self, dispatcher: Dispatcher) -> None:
        self.d = dispatcher
        self.conn: psycopg.Connection | None = None

    def call(self, name: str, params: dict[str, Any]) -> list[tuple]:
        delay = self.d.reconnect_delay
        for attempt in range(1, self.d.report_attempts + 1):
            try:
                if self.conn is None or self.conn.closed or self.conn.broken:
                    self.conn = db.connect(self.d.url)
                return self.conn.execute(db.load_query(name), params).fetchall()
            except psycopg.OperationalError as exc:
                lost = self.conn is None or self.conn.broken or self.conn.closed
                if not lost or attempt == self.d.report_attempts:
                    raise
                self.d.log.warning("db.reconnect", doing=name, attempt=attempt,
                                   error=str(exc).strip())
                time.sleep(delay)
                delay = min(delay * 2, 10.0)
        raise AssertionError("unreachable")

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()


def run_chain(
    d: Dispatcher, claim: Claim, kind: Kind, env: Mapping[str, str], cwd: Path | None
) -> RunResult:
    """Run the steps of `kind` for `claim` (from the step the database names) and return the
    chain's result: ok when every step ran and each failure was allowed to continue."""
    started = time.monotonic()
    deadline = started + kind.timeout
    link = _Link(d)
    try:
        return _steps(d, link, claim, kind, env, cwd, started, deadline)
    finally:
        link.close()


def _steps(
    d: Dispatcher, link: _Link, claim: Claim, kind: Kind, env: Mapping[str, str], cwd: Path | None,
    started: float, deadline: float,
) -> RunResult:
    ids = {"run_id": claim.run_id, "dispatcher": d.name}
    try:
        first = link.call("chain_start", ids)[0][0]
    except psycopg.Error as exc:
        note = f"[tickq: cannot ask the database where the chain starts: {exc}; nothing was run]\n"
        return RunResult("failed", None, note, time.monotonic() - started, None)
    parts: list[str] = []
    outcome, exit_code, pid = "ok", 0, None
    for n, step in enumerate(kind.steps, start=1):
        if n < first:
            parts.append(f"[tickq: step {n} {step.name}: ended ok in an earlier try; resumed "
                         "after it]\n")
            continue
        if d.stop_event.is_set():
            parts.append(f"[tickq: interrupted by dispatcher shutdown before step {n} "
                         f"{step.name}; later steps not started]\n")
            outcome, exit_code = "interrupted", None
            break
        left = deadline - time.monotonic()
        if left <= 0:
            parts.append(f"[tickq: chain timed out after {kind.timeout}s before step {n} "
                         f"{step.name}; later steps not started]\n")
            outcome, exit_code = "timeout", None
            break
        cut_by_chain = left < step.timeout
        # Each step starts by the one rule every command does (tickq.commands).
        start = programs.resolve(step.command, d.registry.path.resolve().parent,
                                 step.cwd or cwd, {**kind.env, **step.env})
        result = run_command(
            start.argv,
            cwd=start.cwd,
            env={**env, **step.env, "TICKQ_STEP": step.name, "TICKQ_STEP_N": str(n)},
            timeout=min(step.timeout, left),
            grace=d.grace,
            stop_event=d.stop_event,
            ledger=d.ledger,
            labels={"kind": claim.kind, "run_id": claim.run_id, "step": step.name,
                    "dispatcher": d.name},
        )
        pid = result.pid
        fields = {"kind": claim.kind, "run_id": claim.run_id, "step": step.name, "n": n,
                  "outcome": result.outcome, "exit_code": result.exit_code,
                  "duration_s": round(result.duration, 3)}
        parts.append(f"[tickq: step {n} {step.name}: {result.outcome}"
                     f" (exit {result.exit_code}, {result.duration:.1f}s)]\n{result.output_tail}")
        try:
            link.call("report_step", {**ids, "n": n, "name": step.name,
                                      "outcome": result.outcome, "exit_code": result.exit_code,
                                      "output_tail": result.output_tail,
                                      "duration": result.duration})
            d.log.event("chain.step", level="info" if result.outcome == "ok" else "warning",
                        **fields)
        except psycopg.Error as exc:
            # Refused (the lease is gone: TQ001) or the database is away: the step's result
            # goes to the log whole, and no further step starts without a record of this one.
            d.log.error("chain.step_unreported", **fields, sqlstate=exc.sqlstate,
                        error=str(exc).strip(), output_tail=result.output_tail[-2000:])
            parts.append("[tickq: this step's result could not be recorded; later steps not "
                         "started]\n")
            outcome, exit_code = "failed", result.exit_code
            break
        if result.outcome == "ok":
            continue
        if result.outcome == "interrupted":
            outcome, exit_code = "interrupted", result.exit_code
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
    return RunResult(outcome, exit_code, tail[-65536:], time.monotonic() - started, pid)  # type: ignore[arg-type]
