"""One agent run (`python -m tickq.agents ID`): what the dispatcher starts for a claim of
`agent.<name>`. Its own entry point, so a run loads the runner, the client and the database
door, never the command line's parser and every command module (`tickq agent exec ID` is the
same run through the CLI).

The dispatcher gives this process the agent's numeric id and nothing else of the agent; the
prompt, limits and tools are read here from the database, as data. Each model call is a turn.
A tool call runs the registry's command for that tool under its own watchdog, with the model's
arguments as JSON on its standard input (never in its argv), and its bounded output goes back
to the model. The run ends ok when the model answers without a tool call, and fails with
"turn limit" when the last allowed turn still asks for a tool. The agent's own watchdog is the
dispatcher's: its SIGTERM stops the tool running now and ends this process.

The transcript of each turn goes to the database (tickq.record_agent_turn, bounded); the final
answer goes to standard output, which becomes the run's output tail, and to the registry's
`deliver` command as JSON on its stdin. The API key is read from the environment variable the
registry names, removed from this process's environment before any tool starts, and scrubbed
from everything written anywhere.
"""

from __future__ import annotations

import json
import math
import os
import signal
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, TextIO

from tickq.agents import extra
from tickq.agents.bounds import bounded, check_nesting
from tickq.agents.client import ChatClient, ModelError
from tickq.db.api import agent_run as api
from tickq.db.connect import Link, first_line, timeouts_of
from tickq.db.embedded_queue import resolve_url
from tickq.db.errors import DatabaseRefused, DatabaseUnavailable
from tickq.host.ledger import Ledger
from tickq.host.process import Command, Watch, run_command
from tickq.host.stops import StopEvent
from tickq.registry import AgentTool, Registry

# The database URL the dispatcher hands to its agent runner, and to nothing else it starts.
DATABASE_ENV = "TICKQ_AGENT_DATABASE_URL"
TOOL_OUTPUT_BYTES = 8192  # of a tool's output, what the model and the transcript see
TOOL_ARGUMENTS_MAX = 16384  # characters of a model's arguments passed to a tool
TOOL_CALLS_PER_TURN = 8
ENTRY_BYTES = 30000  # a transcript turn, under the database's 32 KiB bound
ANSWER_CHARS = 60000  # the answer printed as output, under the 64 KiB output tail

EXIT_OK, EXIT_FAILED, EXIT_CONFIG = 0, 1, 2


class Stopped(BaseException):
    """The dispatcher's watchdog (or a person) asked this run to stop."""


class AgentFailed(Exception):
    """The run failed; the message says why (e.g. "turn limit")."""


@dataclass
class Outcome:
    status: int
    answer: str | None = None
    reason: str | None = None
    turns: int = 0
    transcript: list[dict[str, Any]] = field(default_factory=list)


def system_message(agent: dict[str, Any], now: datetime) -> str:
    local = now.astimezone(_zone(agent["timezone"]))
    return (
        f"You are {agent['name']}, an agent that runs on a schedule. Do the task in the user "
        f"message and reply with the result. It is now {local:%A %Y-%m-%d %H:%M} "
        f"({agent['timezone']}). You have at most {agent['max_turns']} turns; each reply that "
        "calls tools uses one. Answer without calling a tool to finish."
    )


def _zone(name: str) -> Any:
    from zoneinfo import ZoneInfo

    try:
        return ZoneInfo(name)
    except (KeyError, ValueError):
        return UTC


def tool_definitions(agent: dict[str, Any], registry: Registry) -> dict[str, AgentTool]:
    """The agent's tools that the registry still offers (a tool removed from the registry since
    the agent was saved is simply not offered)."""
    assert registry.agents is not None
    offered = registry.agents.tools
    return {name: offered[name] for name in agent["tools"] or () if name in offered}


class AgentRun:
    def __init__(
        self,
        agent: dict[str, Any],
        registry: Registry,
        client: ChatClient,
        *,
        record: Callable[[int, dict[str, Any]], None],
        stop: StopEvent,
        ledger: Ledger | None = None,
    ) -> None:
        assert registry.agents is not None
        self.agent = agent
        self.registry = registry
        self.settings = registry.agents
        self.client = client
        self.record = record
        self.stop = stop
        self.ledger = ledger
        self.tools = tool_definitions(agent, registry)
        self.folder = registry.path.resolve().parent
        # The turn in progress, recorded as stopped if the watchdog ends the run during it.
        self.pending: tuple[int, dict[str, Any]] | None = None

    def run(self) -> Outcome:
        # Within the caps of [agents] already: tickq.load_agent applies them.
        max_turns = int(self.agent["max_turns"])
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": system_message(self.agent, datetime.now(UTC))},
            {"role": "user", "content": self.agent["prompt"]},
        ]
        definitions = [
            {"type": "function", "function": {
                "name": t.name, "description": t.description, "parameters": t.parameters}}
            for t in self.tools.values()
        ]
        outcome = Outcome(EXIT_FAILED)
        for turn in range(1, max_turns + 1):
            entry: dict[str, Any] = {
                "turn": turn,
                "request": {"model": self.settings.model, "messages": len(messages),
                            "tools": list(self.tools)},
            }
            outcome.turns = turn
            self.pending = (turn, entry)
            try:
                completion = self.client.complete(messages, definitions)
            except ModelError as exc:
                entry["error"] = str(exc)
                self._record(turn, entry, outcome)
                outcome.reason = f"model server: {exc}"
                return outcome
            message = completion.message
            entry["attempts"] = completion.attempts
            if completion.retried:
                entry["retried"] = completion.retried
            if completion.usage:
                entry["usage"] = {k: v for k, v in completion.usage.items()
                                  if isinstance(v, int | float) and math.isfinite(v)}
            entry["finish_reason"] = completion.finish_reason
            calls = message.get("tool_calls") or []
            content = message.get("content") if isinstance(message.get("content"), str) else None
            if not calls:
                entry["answer"] = content or ""
                self._record(turn, entry, outcome)
                outcome.status, outcome.answer = EXIT_OK, content or ""
                return outcome
            if content:
                entry["content"] = content
            if turn == max_turns:
                entry["tool_calls"] = [
                    {"name": c["function"].get("name"), "arguments": c["function"].get("arguments"),
                     "outcome": "not run: no turn left to read the result"} for c in calls
                ]
                self._record(turn, entry, outcome)
                outcome.reason = (f"turn limit: turn {turn} of {max_turns} still asked for "
                                  f"{len(calls)} tool call(s)")
                return outcome
            if len(calls) > TOOL_CALLS_PER_TURN:
                entry["cut"] = [f"{len(calls) - TOOL_CALLS_PER_TURN} of {len(calls)} tool calls "
                                f"(at most {TOOL_CALLS_PER_TURN} a turn): not run, not kept"]
                calls = calls[:TOOL_CALLS_PER_TURN]
            messages.append({"role": "assistant", "content": _short(content),
                             "tool_calls": [_echo(c) for c in calls]})
            entry["tool_calls"] = []
            for index, call in enumerate(calls):
                # In the entry before it runs: a run stopped during a tool shows which one.
                record: dict[str, Any] = {"outcome": "running"}
                entry["tool_calls"].append(record)
                result = self._call_tool(call, index, record)
                messages.append({"role": "tool", "tool_call_id": str(call.get("id") or index),
                                 "content": result})
            self._record(turn, entry, outcome)
        raise AssertionError("unreachable: the last turn returns")

    def _call_tool(self, call: dict[str, Any], index: int, record: dict[str, Any]) -> str:
        """Run one tool call (filling in `record`); the text that goes back to the model."""
        function = call["function"]
        name = function.get("name")
        arguments = function.get("arguments")
        if not isinstance(arguments, str):
            arguments = json.dumps(arguments if arguments is not None else {})
        record |= {"id": call.get("id"), "name": name, "arguments": _short(arguments)}
        tool = self.tools.get(name) if isinstance(name, str) else None
        if tool is None:
            record["outcome"] = "unknown tool"
            offered = ", ".join(self.tools) or "none"
            return f"error: there is no tool {name!r}; the tools are: {offered}"
        if len(arguments) > TOOL_ARGUMENTS_MAX:
            record["outcome"] = "arguments too long"
            return f"error: arguments longer than {TOOL_ARGUMENTS_MAX} characters"
        try:
            check_nesting(arguments)
        except ValueError as exc:
            record["outcome"] = "arguments nested too deep"
            return f"error: the arguments are not JSON this tool takes: {exc}"
        try:
            json.loads(arguments or "{}")
        except json.JSONDecodeError as exc:
            record["outcome"] = "arguments not JSON"
            return f"error: the arguments are not JSON: {exc}"
        # The model's text reaches the tool on stdin only: the argv is the registry's.
        result = run_command(
            Command(tool.command, tool.cwd or self.folder, stdin=(arguments or "{}").encode()),
            Watch(tool.timeout, grace=2.0, tail_bytes=TOOL_OUTPUT_BYTES, stop=self.stop,
                  ledger=self.ledger, labels={"agent": self.agent["name"], "tool": tool.name}),
        )
        if result.outcome == "interrupted":
            raise Stopped
        output = self.client.scrub(result.output_tail)
        record |= {"outcome": result.outcome, "exit_code": result.exit_code,
                   "output_tail": output, "duration_s": round(result.duration, 3)}
        if result.outcome == "ok":
            return output
        if result.outcome == "timeout":
            return f"error: the tool timed out after {tool.timeout}s; its output:\n{output}"
        return f"error: the tool failed (exit {result.exit_code}); its output:\n{output}"

    def _record(self, turn: int, entry: dict[str, Any], outcome: Outcome) -> None:
        self.pending = None
        entry = bounded(json.loads(self.client.scrub(json.dumps(entry))), ENTRY_BYTES)
        outcome.transcript.append(entry)
        self.record(turn, entry)

    def record_stopped(self, signum: signal.Signals) -> None:
        """Keep the turn the watchdog interrupted, so the history shows where the time went."""
        if self.pending is None:
            return
        turn, entry = self.pending
        entry["error"] = f"stopped by {signum.name} (the agent's watchdog) during this turn"
        self._record(turn, entry, Outcome(EXIT_FAILED))


def _short(text: str | None, cap: int = TOOL_ARGUMENTS_MAX) -> str | None:
    """`text` cut to `cap` characters, saying how much was cut."""
    if text is None or len(text) <= cap:
        return text
    return text[:cap] + f"[... {len(text) - cap} cut]"


def _echo(call: dict[str, Any]) -> dict[str, Any]:
    """A tool call as it goes back to the model: arguments too long to run are not repeated."""
    function = dict(call["function"])
    arguments = function.get("arguments")
    if isinstance(arguments, str) and len(arguments) > TOOL_ARGUMENTS_MAX:
        function["arguments"] = "{}"
    return {**call, "function": function}


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
    if settings is None:
        print(f"[agent: {registry.path} has no [agents] section]", file=err)
        return EXIT_CONFIG
    lacking = extra.missing()
    if lacking:
        print(f"[agent: {lacking}]", file=err)
        return EXIT_CONFIG
    api_key = None
    if settings.api_key_env:
        # Taken out of the environment, so no tool or deliver command inherits it.
        api_key = os.environ.pop(settings.api_key_env, None)
        if not api_key:
            print(f"[agent: the environment variable {settings.api_key_env} (agents.api_key_env) "
                  "is not set]", file=err)
            return EXIT_CONFIG
    stop = StopEvent()

    def on_signal(signum: int, _frame: Any) -> None:
        stop.stop(signum)
        raise Stopped

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
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


def _run(
    agent: dict[str, Any], registry: Registry, client: ChatClient,
    record: Callable[[int, dict[str, Any]], None], stop: StopEvent, ledger: Ledger,
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
    if outcome.status != EXIT_OK:
        print(f"[agent: {outcome.reason}]", file=err)
        return EXIT_FAILED
    answer = client.scrub(outcome.answer or "")
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


