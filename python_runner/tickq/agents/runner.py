"""One agent run (`python -m tickq.agents ID`): what the dispatcher starts for a claim of
`agent.<name>`. Its own entry point, so a run loads the runner, the client and the database
door, never the command line's parser and every command module (`tickq agent exec ID` is the
same run through the CLI).

The dispatcher gives this process the agent's numeric id and nothing else of the agent; the
prompt, limits and tools are read here from the database, as data. The turns, and the tools
they call, are tickq.agents.turns. The agent's own watchdog is the dispatcher's: its SIGTERM
stops the tool running now and ends this process.

The transcript of each turn goes to the database (tickq.record_agent_turn, bounded); the final
answer goes to standard output, which becomes the run's output tail, and to the registry's
`deliver` command as JSON on its stdin. The API key is read from the environment variable the
registry names, removed from this process's environment before any tool starts, and scrubbed
from everything written anywhere.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from typing import Any, TextIO

from tickq.agents import extra
from tickq.agents.client import ChatClient
from tickq.agents.turns import AgentRun, Record, Stopped
from tickq.db.api import agent_run as api
from tickq.db.connect import Link, first_line, timeouts_of
from tickq.db.contract import OUTPUT_TAIL_CHARS
from tickq.db.embedded_queue import resolve_url
from tickq.db.errors import DatabaseRefused, DatabaseUnavailable
from tickq.host.ledger import Ledger
from tickq.host.process import Command, Watch, run_command
from tickq.host.stops import StopEvent
from tickq.registry import Registry

# The database URL the dispatcher hands to its agent runner, and to nothing else it starts.
DATABASE_ENV = "TICKQ_AGENT_DATABASE_URL"
# The answer printed as the run's output, under the output tail's bound: room is left for the
# runner's last lines and the dispatcher's notes.
ANSWER_CHARS = OUTPUT_TAIL_CHARS - 5536

EXIT_OK, EXIT_FAILED, EXIT_CONFIG = 0, 1, 2


def deliver(
    registry: Registry, agent: dict[str, Any], run_id: int | None, answer: str,
    client: ChatClient, stop: StopEvent, ledger: Ledger | None,
) -> str | None:
    """Run the registry's deliver command with the answer as JSON on stdin; a problem or None."""
    assert registry.agents is not None
    command = registry.agents.deliver
    if not command:
        return None
    doc = {"agent": agent["name"], "agent_id": agent["id"], "owner": agent["owner"],
           "run_id": run_id, "answer": answer}
    result = run_command(
        Command(command, registry.path.resolve().parent, stdin=json.dumps(doc).encode()),
        Watch(registry.agents.deliver_timeout, grace=2.0, tail_bytes=4096, stop=stop,
              ledger=ledger, labels={"agent": agent["name"], "deliver": True}),
    )
    if result.outcome == "interrupted":
        raise Stopped
    if result.outcome == "ok":
        return None
    return client.scrub(f"deliver command {result.outcome} (exit {result.exit_code}): "
                        f"{result.output_tail[-500:].strip()}")


def execute(
    agent_id: int, registry: Registry, url: str, *, out: TextIO = sys.stdout,
    err: TextIO = sys.stderr,
) -> int:
    """The whole run: 0 ok, 1 failed (the reason printed last), 2 configuration."""
    settings = registry.agents
    problem, api_key = _configuration(registry)
    if problem is not None or settings is None:
        print(f"[agent: {problem}]", file=err)
        return EXIT_CONFIG
    stop = _stopped_by_signals()
    run_id = _run_id()
    client = ChatClient(settings.base_url, settings.model, api_key,
                        request_timeout=settings.request_timeout,
                        attempts=settings.http_attempts)
    ledger = Ledger()
    # The registry's db_* timeouts, as on every connection of a tick.
    link = Link(url, timeouts_of(registry.settings))
    try:
        with link:
            try:
                agent = link.call(api.load_agent, agent_id)
            except DatabaseRefused as exc:
                print(f"[agent: {exc.message}]", file=err)
                return EXIT_FAILED

            def record(turn: int, entry: dict[str, Any]) -> None:
                if run_id is None:
                    return
                try:
                    link.call(api.record_agent_turn, run_id, agent_id, turn, entry)
                except (DatabaseRefused, DatabaseUnavailable) as exc:
                    # A transcript that cannot be kept does not stop the run; say so in its output.
                    print(f"[agent: turn {turn} not recorded: {getattr(exc, 'message', exc)}]",
                          file=err)

            return _run(agent, registry, client, record, stop, ledger, run_id, out, err)
    except Stopped:
        print(f"[agent: stopped by {stop.signum.name}]", file=err)
        return 128 + int(stop.signum)
    except DatabaseUnavailable as exc:
        print(f"[agent: cannot reach the database: {first_line(exc)}]", file=err)
        return EXIT_FAILED
    finally:
        client.close()


def _configuration(registry: Registry) -> tuple[str | None, str | None]:
    """What stops the run before it starts (no [agents] section, a missing extra, the API key's
    variable unset), else None; and the API key, taken out of the environment so that no tool
    or deliver command inherits it."""
    settings = registry.agents
    if settings is None:
        return f"{registry.path} has no [agents] section", None
    lacking = extra.missing()
    if lacking:
        return lacking, None
    if not settings.api_key_env:
        return None, None
    api_key = os.environ.pop(settings.api_key_env, None)
    if not api_key:
        return (f"the environment variable {settings.api_key_env} (agents.api_key_env) is not "
                "set"), None
    return None, api_key


def _stopped_by_signals() -> StopEvent:
    """A stop that SIGTERM (the dispatcher's watchdog) and SIGINT set, ending the turn."""
    stop = StopEvent()

    def on_signal(signum: int, _frame: Any) -> None:
        stop.stop(signum)
        raise Stopped

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    return stop


def _run(
    agent: dict[str, Any], registry: Registry, client: ChatClient, record: Record,
    stop: StopEvent, ledger: Ledger,
    run_id: int | None, out: TextIO, err: TextIO,
) -> int:
    """The turns, then the answer to stdout and to the deliver command."""
    run = AgentRun(agent, registry, client, record=record, stop=stop, ledger=ledger)
    try:
        outcome = run.run()
    except Stopped:
        # Signals stay blocked from here: the note below must not be cut short too.
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM, signal.SIGINT})
        run.record_stopped(stop.signum)
        raise
    if outcome.answer is None:
        print(f"[agent: {outcome.reason}]", file=err)
        return EXIT_FAILED
    answer = client.scrub(outcome.answer)
    out.write(answer[-ANSWER_CHARS:] + ("" if answer.endswith("\n") else "\n"))
    out.flush()
    problem = deliver(registry, agent, run_id, answer, client, stop, ledger)
    if problem:
        print(f"[agent: {problem}]", file=err)
        return EXIT_FAILED
    return EXIT_OK


def _run_id() -> int | None:
    value = os.environ.get("TICKQ_RUN_ID", "")
    return int(value) if value.isdigit() else None


def database_url(explicit: str | None) -> str:
    """The dispatcher's URL (TICKQ_AGENT_DATABASE_URL), else what any tickq command would use;
    both variables are taken out of the environment, so no tool inherits them."""
    handed = os.environ.pop(DATABASE_ENV, None)
    url = handed or resolve_url(explicit, os.environ.get("TICKQ_REGISTRY"))
    # Tools and deliver are registry commands that have no business with the queue's database.
    os.environ.pop("DATABASE_URL", None)
    return url


