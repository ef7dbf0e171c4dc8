"""`tickq agent add|edit|show|list|pause|resume|remove|run|history|exec`: user-built agents.

People build agents here at run time, without touching the registry file: the database checks
every value (sql/api/09_agents.sql) and keeps each agent's one queue row. `exec` is what the
dispatcher runs for an agent's claim (tickq/agents/runner.py).

Exit statuses as everywhere (tickq.db.errors): 0 done, 1 a "no" answer (no such agent, name
taken, no free slot), 2 an invalid value or registry, 3 the database cannot be reached.
"""

from __future__ import annotations

import argparse
import difflib
import json
import sys
from datetime import UTC
from pathlib import Path
from typing import Any

from tickq.cli import common
from tickq.cli.text import json_value, pairs, shown, table, when
from tickq.db.api import agents
from tickq.db.errors import EXIT_NO, EXIT_OK, DatabaseUnreachable, InvalidInput, NoAnswer
from tickq.registry import AGENT_PREFIX, load_registry
from tickq.registry.durations import format_duration

# ---------------------------------------------------------------- values


def _prompt(args: argparse.Namespace) -> str | None:
    if args.prompt is not None and args.prompt_file is not None:
        raise InvalidInput("give --prompt or --prompt-file, not both")
    if args.prompt == "-":
        return sys.stdin.read()
    if args.prompt_file is not None:
        try:
            return Path(args.prompt_file).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise InvalidInput(f"cannot read the prompt file {args.prompt_file}: {exc}") from None
    return args.prompt


# The options of `agent add|edit` and the field of tickq.save_agent each one sets.
_FIELDS = (("every", "every"), ("cron", "cron"), ("timezone", "timezone"),
           ("turns", "max_turns"), ("timeout", "timeout"))


def _numbers(text: str) -> list[str | int]:
    """"1,15", "-1", "jan,jul" -> the list tickq.parse_schedule judges (numbers as numbers)."""
    parts = [p.strip().lower() for p in text.split(",") if p.strip()]
    return [int(p) if p.lstrip("-").isdigit() else p for p in parts]


def _days(text: str) -> list[str]:
    """"mon-fri", "sat,sun", "1st mon,last fri" -> the list tickq.parse_schedule judges, as the
    registry's `on` holds it (what a weekday, a range or an nth weekday is is the database's
    rule): each entry lowercased, with single spaces."""
    return [" ".join(p.lower().split()) for p in text.split(",") if p.strip()]


def _fields(args: argparse.Namespace) -> dict[str, Any]:
    """The JSON tickq.save_agent takes, from the options given (an edit changes only those)."""
    fields: dict[str, Any] = {}
    prompt = _prompt(args)
    if prompt is not None:
        fields["prompt"] = prompt
    if args.at is not None:
        fields["at"] = [t for group in args.at for t in group]
    for option in ("days", "months"):  # --days 1,15 / -1, --months jan,jul
        if getattr(args, option) is not None:
            fields[option] = _numbers(getattr(args, option))
    if args.on is not None:  # --on mon-fri / sat,sun / '1st mon,last fri'
        fields["on"] = _days(args.on)
    for option, field in _FIELDS:
        if getattr(args, option) is not None:
            fields[field] = getattr(args, option)
    if args.owner is not None:
        fields["owner"] = args.owner or None
    if args.tools is not None:
        fields["tools"] = [t for t in args.tools.split(",") if t]
    return fields


# ---------------------------------------------------------------- commands


def cmd_add(args: argparse.Namespace) -> int:
    return _save(args, create=True)


def cmd_edit(args: argparse.Namespace) -> int:
    return _save(args, create=False)


def _save(args: argparse.Namespace, create: bool) -> int:
    fields = _fields(args)
    if create and args.paused:
        fields["paused"] = True
    if not create and not fields:
        raise InvalidInput("nothing to change: give at least one option (see --help)")
    registry = common.registry_if_any(args)
    with common.open_queue(args, registry) as conn, conn.transaction():
        # The registry's [agents] bounds and tools, current before the agent is checked
        # against them.
        if registry is not None:
            agents.sync_registry(conn, registry)
        row = agents.save_agent(conn, args.name, fields, create)
    print(f"{'added' if create else 'saved'} agent {row['name']} (id {row['id']}, kind "
          f"{AGENT_PREFIX}{row['name']})")
    if registry is None or registry.agents is None:
        print(f"tickq: warning: {args.registry} has no [agents] section: the agent runs only "
              "on a dispatcher whose registry has one", file=sys.stderr)
    lacking = common.agents_cannot_run(registry)
    if lacking:
        print(f"tickq: warning: {lacking}", file=sys.stderr)
    return cmd_show(args)


def cmd_show(args: argparse.Namespace) -> int:
    with common.open_queue(args) as conn:
        agent = agents.agent(conn, args.name)
        if agent is None:
            names = [row["name"] for row in agents.agents(conn)]
            raise NoAnswer(f"no agent {args.name!r}{_did_you_mean(args.name, names)}")
        runs = agents.next_runs(conn, args.name, 5)
    if getattr(args, "json", False):
        print(json.dumps({**agent, "next_runs": runs}, default=json_value, indent=2))
        return EXIT_OK
    prompt = agent["prompt"]
    lines = prompt.strip().splitlines() or [""]
    more = "..." if len(lines[0]) > 70 or len(lines) > 1 else ""
    print(pairs([
        ("agent", f"{agent['name']} (id {agent['id']}, kind {AGENT_PREFIX}{agent['name']})"),
        ("schedule", agent["schedule"]),
        ("state", agent["state"]),
        ("turns", str(agent["max_turns"])),
        ("timeout", format_duration(agent["timeout_s"])),
        ("owner", agent["owner"] or "-"),
        ("tools", ", ".join(agent["tools"]) or "-"),
        ("prompt", f"{lines[0][:70]!r}{more} ({len(prompt)} characters)"),
        ("last run", f"{agent['last_outcome'] or '-'} {when(agent['last_finished_at'])}"),
    ]))
    if agent["state"] == "paused":
        print("next runs: none while paused; these follow a resume")
    zone = runs[0]["timezone"] if runs else agent["timezone"]
    in_utc = zone in (None, "UTC")  # the same time twice says nothing more
    print(f"next runs ({zone or 'UTC'}{'' if in_utc else ' / UTC'}):")
    for run in runs:
        utc = f"{run['run_at'].astimezone(UTC):%a %Y-%m-%d %H:%M} UTC"
        print(f"  {utc}" if in_utc else f"  {run['local_time']:%a %Y-%m-%d %H:%M} {zone}   {utc}")
    return EXIT_OK


def _did_you_mean(name: str, names: list[str]) -> str:
    """'; did you mean "x"?' for a close agent name, else where the agents are listed."""
    close = difflib.get_close_matches(name, names, n=3, cutoff=0.6)
    if close:
        return "; did you mean " + " or ".join(f'"{c}"' for c in close) + "?"
    return "; tickq agent list shows the agents"


def cmd_list(args: argparse.Namespace) -> int:
    with common.open_queue(args) as conn:
        rows = agents.agents(conn)
    if args.json:
        print(json.dumps(rows, default=json_value, indent=2))
        return EXIT_OK
    if not rows:
        print("no agents; tickq agent add NAME --prompt ... --every 1d adds one")
        return EXIT_OK
    print(table(
        ["agent", "schedule", "state", "turns", "timeout", "owner", "tools", "next due", "last"],
        [[r["name"], r["schedule"], r["state"], str(r["max_turns"]),
          format_duration(r["timeout_s"]), r["owner"] or "-", ",".join(r["tools"]) or "-",
          when(r["next_due_at"]), r["last_outcome"] or "-"] for r in rows],
    ))
    return EXIT_OK


# `agent pause|resume|remove`: the change each makes, and the word that reports it.
_CHANGES = {"pause": (agents.pause_agent, "paused"), "resume": (agents.resume_agent, "resumed"),
            "remove": (agents.remove_agent, "removed")}


def cmd_change(args: argparse.Namespace) -> int:
    change, done = _CHANGES[args.agent_command]
    with common.open_queue(args) as conn:
        row = change(conn, args.name)
    print(f"{done} agent {args.name} (id {row['id']})")
    return EXIT_OK


def cmd_run(args: argparse.Namespace) -> int:
    """A manual run through the queue's claim path (counted against the slots)."""
    from tickq.cli.queue import dispatcher
    from tickq.host.stops import StopEvent
    from tickq.log import EventLog

    registry = load_registry(args.registry)
    stop = StopEvent()
    got = common.on_signals(stop)
    queue = dispatcher(args, registry, EventLog(args.log_format, stream=sys.stderr), stop)
    try:
        _claim, result = queue.run_now(AGENT_PREFIX + args.name)
    finally:
        queue.close()
    if result.output_tail:
        sys.stdout.write(result.output_tail if result.output_tail.endswith("\n")
                         else result.output_tail + "\n")
    # As `tickq run`: exit 0 only when the run ended ok.
    if "signal" in got:
        return 128 + got["signal"]
    return EXIT_OK if result.outcome == "ok" else EXIT_NO


def cmd_history(args: argparse.Namespace) -> int:
    with common.open_queue(args) as conn:
        if args.run is None:
            rows = agents.agent_runs(conn, args.name, args.limit)
        else:
            rows = agents.transcript(conn, args.name, args.run)
    if args.json:
        print(json.dumps(rows, default=json_value, indent=2))
        return EXIT_OK
    if args.run is not None:
        if not rows:
            raise NoAnswer(f"no transcript of run {args.run} of agent {args.name!r}")
        for row in rows:
            print(shown(_turn_text(row["turn"], row["entry"])))
        return EXIT_OK
    if not rows:
        print(f"no runs of agent {args.name!r} yet")
        return EXIT_OK
    print(shown(table(
        ["run", "claimed", "trigger", "outcome", "turns", "duration", "output (last line)"],
        [[str(r["run_id"]), when(r["claimed_at"]), r["run_trigger"], r["outcome"],
          str(r["turns"]), "-" if r["duration_s"] is None else f"{r['duration_s']:.1f}s",
          _last_line(r["output_tail"])] for r in rows],
    )))
    return EXIT_OK


def cmd_exec(args: argparse.Namespace) -> int:
    """The agent runner: what the dispatcher starts for a claim of agent.<name>."""
    from tickq.agents import runner

    registry = load_registry(args.registry)
    try:
        url = runner.database_url(args.database_url)
    except Exception as exc:
        raise DatabaseUnreachable(f"cannot start the embedded PostgreSQL: {exc}") from None
    return runner.execute(args.agent_id, registry, url)


# ---------------------------------------------------------------- formatting


def _turn_text(turn: int, entry: dict[str, Any]) -> str:
    lines = [f"turn {turn}: {entry.get('request', {}).get('messages', '?')} messages to "
             f"{entry.get('request', {}).get('model', '?')}"
             + (f", {entry['attempts']} tries" if entry.get("attempts", 1) > 1 else "")
             + (f", tokens {json.dumps(entry['usage'])}" if entry.get("usage") else "")]
    for problem in entry.get("retried", []):
        lines.append(f"  retried: {problem}")
    if entry.get("error"):
        lines.append(f"  error: {entry['error']}")
    for call in entry.get("tool_calls", []):
        lines.append(f"  tool {call.get('name')} {call.get('arguments')} -> {call.get('outcome')}")
        tail = (call.get("output_tail") or "").strip()
        if tail:
            lines += [f"    | {line}" for line in tail.splitlines()[-10:]]
    if "answer" in entry:
        lines.append("  answer:")
        lines += [f"    {line}" for line in (entry["answer"] or "").splitlines()]
    return "\n".join(lines)


def _last_line(text: str | None) -> str:
    lines = (text or "").strip().splitlines()
    return (lines[-1][:60] if lines else "-")
