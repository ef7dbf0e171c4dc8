"""The turns of one agent run: each model call is a turn. A tool call runs the registry's command
for that tool under its own watchdog, with the model's arguments as JSON on its standard input
(never in its argv), and its bounded output goes back to the model. The run ends with an answer
when the model replies without a tool call, and fails with "turn limit" when the last allowed
turn still asks for a tool. Each turn's transcript entry is recorded as it ends (bounded to
what the database keeps), scrubbed of the API key.
"""

from __future__ import annotations

import json
import math
import signal
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from tickq.agents.bounds import bounded, check_nesting
from tickq.agents.client import ChatClient, ModelError
from tickq.db.contract import AGENT_TURN_BYTES
from tickq.host.ledger import Ledger
from tickq.host.process import Command, Watch, run_command
from tickq.host.stops import StopEvent
from tickq.registry import AgentTool, Registry

# The runner's own caps on what a model may ask of a turn (no database bound mirrors these).
TOOL_OUTPUT_BYTES = 8192  # of a tool's output, what the model and the transcript see
TOOL_ARGUMENTS_MAX = 16384  # characters of a model's arguments passed to a tool
TOOL_CALLS_PER_TURN = 8
# A transcript entry as json.dumps spells it, under the domain tickq.agent_turn_entry's bound:
# the database's jsonb text may spell a number longer (1e300 in full), hence the margin.
ENTRY_BYTES = AGENT_TURN_BYTES - 2768

Record = Callable[[int, dict[str, Any]], None]


class Stopped(BaseException):
    """The dispatcher's watchdog (or a person) asked this run to stop."""


@dataclass
class Outcome:
    answer: str | None = None  # None: the run failed, `reason` says why
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
        self, agent: dict[str, Any], registry: Registry, client: ChatClient, *, record: Record,
        stop: StopEvent, ledger: Ledger | None = None,
    ) -> None:
        assert registry.agents is not None
        self.agent = agent
        self.settings = registry.agents
        self.client = client
        self.record = record
        self.stop = stop
        self.ledger = ledger
        self.tools = tool_definitions(agent, registry)
        self.definitions = [
            {"type": "function", "function": {
                "name": t.name, "description": t.description, "parameters": t.parameters}}
            for t in self.tools.values()]
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
        outcome = Outcome()
        for turn in range(1, max_turns + 1):
            outcome.turns = turn
            if self._turn(turn, max_turns, messages, outcome):
                return outcome
        raise AssertionError("unreachable: the last turn returns")

    def _turn(self, turn: int, max_turns: int, messages: list[dict[str, Any]],
              outcome: Outcome) -> bool:
        """One model call, and the tools it asks for; True when the run ends with it."""
        entry: dict[str, Any] = {
            "turn": turn,
            "request": {"model": self.settings.model, "messages": len(messages),
                        "tools": list(self.tools)},
        }
        self.pending = (turn, entry)
        try:
            completion = self.client.complete(messages, self.definitions)
        except ModelError as exc:
            entry["error"] = str(exc)
            self._record(turn, entry, outcome)
            outcome.reason = f"model server: {exc}"
            return True
        _describe(entry, completion)
        message = completion.message
        calls = message.get("tool_calls") or []
        content = message.get("content") if isinstance(message.get("content"), str) else None
        if not calls:
            entry["answer"] = outcome.answer = content or ""
            self._record(turn, entry, outcome)
            return True
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
            return True
        self._call_tools(calls, content, entry, messages)
        self._record(turn, entry, outcome)
        return False

    def _call_tools(self, calls: list[dict[str, Any]], content: str | None,
                    entry: dict[str, Any], messages: list[dict[str, Any]]) -> None:
        """Run a turn's tool calls (at most TOOL_CALLS_PER_TURN), each result a message."""
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

    def _call_tool(self, call: dict[str, Any], index: int, record: dict[str, Any]) -> str:
        """Run one tool call (filling in `record`); the text that goes back to the model."""
        function = call["function"]
        name = function.get("name")
        arguments = function.get("arguments")
        if not isinstance(arguments, str):
            arguments = json.dumps(arguments if arguments is not None else {})
        record |= {"id": call.get("id"), "name": name, "arguments": _short(arguments)}
        tool = self.tools.get(name) if isinstance(name, str) else None
        refused = _refused(name, tool, arguments, self.tools)
        if refused is not None:
            record["outcome"], answer = refused
            return answer
        assert tool is not None
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
        self._record(turn, entry, Outcome())


def _describe(entry: dict[str, Any], completion: Any) -> None:
    """What the transcript keeps of a reply besides its message."""
    entry["attempts"] = completion.attempts
    if completion.retried:
        entry["retried"] = completion.retried
    if completion.usage:
        entry["usage"] = {k: v for k, v in completion.usage.items()
                          if isinstance(v, int | float) and math.isfinite(v)}
    entry["finish_reason"] = completion.finish_reason


def _refused(name: Any, tool: AgentTool | None, arguments: str,
             tools: dict[str, AgentTool]) -> tuple[str, str] | None:
    """Why a tool call is not run (its outcome, and the answer the model gets), or None."""
    if tool is None:
        offered = ", ".join(tools) or "none"
        return "unknown tool", f"error: there is no tool {name!r}; the tools are: {offered}"
    if len(arguments) > TOOL_ARGUMENTS_MAX:
        return "arguments too long", f"error: arguments longer than {TOOL_ARGUMENTS_MAX} characters"
    try:
        check_nesting(arguments)
    except ValueError as exc:
        return ("arguments nested too deep",
                f"error: the arguments are not JSON this tool takes: {exc}")
    try:
        json.loads(arguments or "{}")
    except json.JSONDecodeError as exc:
        return "arguments not JSON", f"error: the arguments are not JSON: {exc}"
    return None


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
