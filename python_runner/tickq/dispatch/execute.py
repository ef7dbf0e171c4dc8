"""Run one claim: the registry's command, an agent's runner, the built-in housekeeping, or a
chain's steps. This is the only place a claim's command starts, and it always comes from the
registry file, never from a database row: the database names the kind and the run, no more.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime

from tickq.db.api import tick as api
from tickq.db.api.tick import Claim
from tickq.db.errors import DatabaseRefused, DatabaseUnavailable
from tickq.dispatch.chain import run_chain
from tickq.dispatch.context import Context
from tickq.host import programs
from tickq.host.process import Command, RunResult, run_command
from tickq.registry import AGENT_PREFIX, default_agent_runner

# The built-in kind tickq.sync_registry adds to every queue (sql/api/02_sync.sql).
HOUSEKEEPING = "tickq.housekeeping"
# The database URL handed to the agent runner alone (tickq.agents.runner.DATABASE_ENV).
AGENT_DATABASE_ENV = "TICKQ_AGENT_DATABASE_URL"


def not_run(note: str, started: float | None = None) -> RunResult:
    """A failed result for a claim whose command never started; `note` says why."""
    duration = 0.0 if started is None else time.monotonic() - started
    return RunResult("failed", None, note, duration, None)


def run_env(claim: Claim) -> dict[str, str]:
    """What a claim's command learns of its run; it never learns anything else from the
    database."""
    return {
        "TICKQ_KIND": claim.kind,
        "TICKQ_RUN_ID": str(claim.run_id),
        "TICKQ_ATTEMPT": str(claim.attempt),
        "TICKQ_TRIGGER": claim.trigger,
        # The slots the run covers: the latest, the earliest merged into it, how many (a manual
        # run covers none: empty, empty, 0).
        "TICKQ_SLOT": _utc(claim.slot_at),
        "TICKQ_FIRST_SLOT": _utc(claim.first_slot_at),
        "TICKQ_SLOTS": str(claim.slots_covered),
    }


def _utc(at: datetime | None) -> str:
    """An instant as ISO 8601 in UTC (2026-12-02T06:00:00Z); empty for none."""
    return "" if at is None else at.astimezone(UTC).isoformat().replace("+00:00", "Z")


def execute(
    ctx: Context, claim: Claim, on_output: Callable[[bytes], None] | None = None
) -> RunResult:
    """Run what the registry says for a claim, under its watchdog; never raises for the
    command's failure."""
    if claim.kind == HOUSEKEEPING:
        return housekeeping(ctx)
    if claim.kind.startswith(AGENT_PREFIX):
        return agent(ctx, claim)
    kind = ctx.registry.kinds.get(claim.kind)
    if kind is None:
        return not_run(f"[tickq: kind {claim.kind!r} is not in the registry "
                       f"{ctx.registry.path}; nothing was run]\n")
    if claim.lease_s is not None and kind.timeout > claim.lease_s:
        # Past the lease the kind may be claimed again while this copy still runs.
        return not_run(
            f"[tickq: not run: its timeout in {ctx.registry.path} ({kind.timeout}s) is longer "
            f"than the lease of this claim ({claim.lease_s:.0f}s); another dispatcher synced "
            "a different registry]\n")
    env = {**kind.env, **run_env(claim)}
    if kind.steps:
        return run_chain(ctx, claim, kind, env, kind.cwd, on_output)
    # Relative command paths and the default working directory are the registry's folder.
    start = programs.resolve(kind.command, ctx.folder, kind.cwd, kind.env)
    return run_command(Command(start.argv, start.cwd, env),
                       ctx.watch(claim, kind.timeout, on_output))


def agent(ctx: Context, claim: Claim) -> RunResult:
    """An agent's run: the registry's agent runner with the agent's id as its one argument.
    The id and the watchdog are all that comes from the database, checked here; the prompt
    and the rest of the agent are data the runner reads itself. The agent's timeout is the
    database's, already within the caps of [agents] (tickq.load_agent)."""
    agents = ctx.registry.agents
    if agents is None:
        return not_run(f"[tickq: {claim.kind} is an agent but the registry {ctx.registry.path} "
                       "has no [agents] section; nothing was run]\n")
    # A connection of its own: this runs in the run's thread, beside the tick's queries.
    with ctx.link() as link:
        found = link.call(api.agent_for_kind, claim.kind)
    if found is None:
        return not_run(f"[tickq: {claim.kind} has no agent (removed?); nothing was run]\n")
    agent_id, timeout = found.id, found.timeout_s
    if type(agent_id) is not int or agent_id <= 0 or type(timeout) is not int or timeout <= 0:
        return not_run(f"[tickq: {claim.kind}: agent id {agent_id!r} is not valid; nothing was "
                       "run]\n")
    env = {**run_env(claim), "TICKQ_REGISTRY": str(ctx.registry.path.resolve()),
           AGENT_DATABASE_ENV: ctx.url}
    if agents.api_key_env and agents.api_key_env in os.environ:
        env[agents.api_key_env] = os.environ[agents.api_key_env]
    if tuple(agents.runner) == default_agent_runner():
        env |= bytecode_settings()
    return run_command(Command([*agents.runner, str(agent_id)], ctx.folder, env),
                       ctx.watch(claim, timeout))


def housekeeping(ctx: Context) -> RunResult:
    """The built-in kind: SQL on a connection of its own, bounded like a watchdog would."""
    started = time.monotonic()
    try:
        with ctx.link() as link:  # under housekeeping_timeout, not db_statement_timeout
            link.retime(link.timeouts._replace(
                statement=ctx.registry.settings.housekeeping_timeout))
            done = link.call(api.housekeeping)
    except (DatabaseUnavailable, DatabaseRefused) as exc:
        return not_run(f"[tickq: housekeeping failed: {exc}]\n", started)
    text = (f"lost={done.lost} runs_pruned={done.runs_pruned} drift_pruned={done.drift_pruned} "
            f"alerts_pruned={done.alerts_pruned}\n")
    return RunResult("ok", 0, text, time.monotonic() - started, None)


def bytecode_settings() -> dict[str, str]:
    """Where this interpreter keeps bytecode (PYTHONPYCACHEPREFIX) or that it writes none
    (-B, PYTHONDONTWRITEBYTECODE), for tickq's own agent runner, which this interpreter runs:
    it writes its modules' bytecode where this process would, not beside a checkout's sources."""
    found = {}
    if sys.pycache_prefix:
        found["PYTHONPYCACHEPREFIX"] = sys.pycache_prefix
    if sys.dont_write_bytecode:
        found["PYTHONDONTWRITEBYTECODE"] = "1"
    return found
