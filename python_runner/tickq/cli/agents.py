"""`tickq agent add|edit|show|list|pause|resume|remove|run|history|exec`: user-built agents.

People build agents here at run time, without touching the registry file: the database checks
every value (sql/api/09_agents.sql) and keeps each agent's one queue row. `exec` is what the
dispatcher runs for an agent's claim (tickq/agents/runner.py).

Exit statuses as everywhere: 0 done, 1 a "no" answer (no such agent, name taken, no free slot),
2 an invalid value or registry, 3 the database cannot be reached; one line per failure.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
from collections.abc import Callable
from datetime import UTC
from pathlib import Path
from typing import Any

import psycopg
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb

from tickq import db
from tickq.db.contract import WEEKDAYS
from tickq.registry import AGENT_PREFIX, Registry, RegistryError, load_registry
from tickq.registry.durations import format_duration, parse_duration

EXIT_OK, EXIT_NO, EXIT_CONFIG, EXIT_DATABASE = 0, 1, 2, 3
# SQLSTATEs of sql/api/09_agents.sql: TQ041 unknown agent and TQ042 name taken are "no"
# answers; TQ040 and TQ043 (and TQ002, a registry the database refuses) are invalid values.
_NO_STATES = ("TQ041", "TQ042", "TQ005", "TQ006", "TQ003")

# `--on mon-fri` expands a range in WEEKDAYS' order (the database checks the days themselves).


class _Fail(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


# ---------------------------------------------------------------- plumbing


def _registry(args: argparse.Namespace, required: bool) -> Registry | None:
    if not required and not Path(args.registry).exists():
        return None
    try:
        return load_registry(args.registry)
    except RegistryError as exc:
        for problem in exc.problems:
            print(f"tickq: {problem}", file=sys.stderr)
        raise _Fail(EXIT_CONFIG, f"invalid registry: {len(exc.problems)} problem(s)") from None


def _connect(args: argparse.Namespace) -> psycopg.Connection:
    try:
        url = db.resolve_url(args.database_url)
    except Exception as exc:  # the embedded server failed to start
        raise _Fail(EXIT_DATABASE, f"cannot start the embedded PostgreSQL: {exc}") from None
    try:
        conn = db.connect(url)
    except psycopg.OperationalError as exc:
        cause = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise _Fail(EXIT_DATABASE, f"cannot reach the database: {cause}") from None
    try:
        db.migrate(conn)
    except db.MigrationError as exc:
        conn.close()
        raise _Fail(EXIT_DATABASE, f"migration failed: {exc}") from None
    conn.row_factory = dict_row  # type: ignore[assignment]
    return conn


def _guarded(func: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    def run(args: argparse.Namespace) -> int:
        try:
            return func(args)
        except _Fail as exc:
            print(f"tickq: {exc}", file=sys.stderr)
            return exc.status
        except psycopg.OperationalError as exc:
            print(f"tickq: lost the database: {str(exc).strip()}", file=sys.stderr)
            return EXIT_DATABASE
        except psycopg.Error as exc:
            state = exc.sqlstate or ""
            message = exc.diag.message_primary or str(exc)
            print(f"tickq: {message}", file=sys.stderr)
            if state in _NO_STATES:
                return EXIT_NO
            if state.startswith("TQ") or state.startswith("22"):
                return EXIT_CONFIG
            return EXIT_DATABASE

    return run


def _sync(conn: psycopg.Connection, registry: Registry | None) -> None:
    """Bring the registry's [agents] bounds and tools into the queue before checking an agent
    against them (the same sync `tickq tick` does; drift is recorded in tickq.drift)."""
    if registry is not None:
        conn.execute(db.load_query("sync_registry_quiet"),
                     {"registry": Jsonb(registry.to_sync_json())})


# ---------------------------------------------------------------- values


def _seconds(text: str) -> int:
    try:
        return parse_duration(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _weekdays(text: str) -> list[str]:
    """"mon-fri", "sat,sun", "mon,wed-fri" -> the weekday names."""
    days: list[str] = []
    for part in text.lower().replace(" ", "").split(","):
        first, _, last = part.partition("-")
        if first not in WEEKDAYS or (last and last not in WEEKDAYS):
            raise argparse.ArgumentTypeError(
                f"weekdays are {' '.join(WEEKDAYS)}, as a list (mon,wed) or a range (mon-fri); "
                f"got {text!r}")
        start, end = WEEKDAYS.index(first), WEEKDAYS.index(last or first)
        span = range(start, end + 1) if end >= start else [*range(start, 7), *range(0, end + 1)]
        days += [WEEKDAYS[i] for i in span if WEEKDAYS[i] not in days]
    return days


def _times(text: str) -> list[str]:
    return [t.strip() for t in text.split(",") if t.strip()]


def _prompt(args: argparse.Namespace) -> str | None:
    if args.prompt is not None and args.prompt_file is not None:
        raise _Fail(EXIT_CONFIG, "give --prompt or --prompt-file, not both")
    if args.prompt == "-":
        return sys.stdin.read()
    if args.prompt_file is not None:
        try:
            return Path(args.prompt_file).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            message = f"cannot read the prompt file {args.prompt_file}: {exc}"
            raise _Fail(EXIT_CONFIG, message) from None
    return args.prompt


def _fields(args: argparse.Namespace) -> dict[str, Any]:
    """The JSON tickq.save_agent takes, from the options given (an edit changes only those)."""
    fields: dict[str, Any] = {}
    prompt = _prompt(args)
    if prompt is not None:
        fields["prompt"] = prompt
    if args.every is not None:
        fields["every"] = args.every
    if args.at is not None:
        fields["at"] = [t for group in args.at for t in group]
    if args.on is not None:
        fields["on"] = args.on
    if args.timezone is not None:
        fields["timezone"] = args.timezone
    if args.turns is not None:
        fields["max_turns"] = args.turns
    if args.timeout is not None:
        fields["timeout"] = args.timeout
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
        raise _Fail(EXIT_CONFIG, "nothing to change: give at least one option (see --help)")
    registry = _registry(args, required=False)
    with _connect(args) as conn, conn.transaction():
        _sync(conn, registry)
        params = {"name": args.name, "fields": Jsonb(fields), "create": create}
        row = conn.execute(db.load_query("save_agent"), params).fetchone()
    assert row is not None
    print(f"{'added' if create else 'saved'} agent {row['name']} (id {row['id']}, kind "
          f"{AGENT_PREFIX}{row['name']})")
    if registry is None or registry.agents is None:
        print(f"tickq: warning: {args.registry} has no [agents] section: the agent's runs fail "
              "until it has one", file=sys.stderr)
    return cmd_show(args)


def cmd_show(args: argparse.Namespace) -> int:
    with _connect(args) as conn:
        agent = conn.execute(db.load_query("agent_show"), {"name": args.name}).fetchone()
        if agent is None:
            raise _Fail(EXIT_NO, f"no agent {args.name!r}; tickq agent list shows the agents")
        runs = conn.execute(db.load_query("agent_next_runs"),
                            {"name": args.name, "count": 5}).fetchall()
    if getattr(args, "json", False):
        print(json.dumps({**agent, "next_runs": runs}, default=_json_value, indent=2))
        return EXIT_OK
    prompt = agent["prompt"]
    lines = prompt.strip().splitlines() or [""]
    more = "..." if len(lines[0]) > 70 or len(lines) > 1 else ""
    print(_rows([
        ("agent", f"{agent['name']} (id {agent['id']}, kind {AGENT_PREFIX}{agent['name']})"),
        ("schedule", agent["schedule"]),
        ("state", agent["state"]),
        ("turns", str(agent["max_turns"])),
        ("timeout", format_duration(agent["timeout_s"])),
        ("owner", agent["owner"] or "-"),
        ("tools", ", ".join(agent["tools"]) or "-"),
        ("prompt", f"{lines[0][:70]!r}{more} ({len(prompt)} characters)"),
        ("last run", f"{agent['last_outcome'] or '-'} {_when(agent['last_finished_at'])}"),
    ]))
    if agent["state"] == "paused":
        print("next runs: none while paused; these follow a resume")
    zone = runs[0]["timezone"] if runs else agent["timezone"]
    print(f"next runs ({zone} / UTC):")
    for run in runs:
        local = run["local_time"]
        print(f"  {local:%a %Y-%m-%d %H:%M} {zone}   "
              f"{run['run_at'].astimezone(UTC):%a %Y-%m-%d %H:%M} UTC")
    return EXIT_OK


def cmd_list(args: argparse.Namespace) -> int:
    with _connect(args) as conn:
        rows = conn.execute(db.load_query("agents")).fetchall()
    if args.json:
        print(json.dumps(rows, default=_json_value, indent=2))
        return EXIT_OK
    if not rows:
        print("no agents; tickq agent add NAME --prompt ... --every 1d adds one")
        return EXIT_OK
    print(_table(
        ["agent", "schedule", "state", "turns", "timeout", "owner", "tools", "next due", "last"],
        [[r["name"], r["schedule"], r["state"], str(r["max_turns"]),
          format_duration(r["timeout_s"]), r["owner"] or "-", ",".join(r["tools"]) or "-",
          _when(r["next_due_at"]), r["last_outcome"] or "-"] for r in rows],
    ))
    return EXIT_OK


def _simple(query: str, verb: str) -> Callable[[argparse.Namespace], int]:
    def command(args: argparse.Namespace) -> int:
        with _connect(args) as conn:
            row = conn.execute(db.load_query(query), {"name": args.name}).fetchone()
        assert row is not None
        print(f"{verb} agent {args.name} (id {row['id']})")
        return EXIT_OK

    return command


def cmd_run(args: argparse.Namespace) -> int:
    """A manual run through the queue's claim path (counted against the slots)."""
    from tickq.db.errors import ClaimRefused, DatabaseUnavailable, RegistryRefused
    from tickq.dispatch.tick import Dispatcher
    from tickq.host.process import StopEvent
    from tickq.log import EventLog

    registry = _registry(args, required=True)
    assert registry is not None
    _connect(args).close()  # reachable and migrated
    stop = StopEvent()
    got: dict[str, int] = {}

    def handler(signum: int, _frame: Any) -> None:
        got["signal"] = signum
        stop.stop(signum)

    signal.signal(signal.SIGTERM, handler)
    signal.signal(signal.SIGINT, handler)
    dispatcher = Dispatcher(db.resolve_url(args.database_url), registry,
                            EventLog(args.log_format, stream=sys.stderr), stop_event=stop)
    try:
        _claim, result = dispatcher.run_now(AGENT_PREFIX + args.name)
    except ClaimRefused as exc:
        raise _Fail(EXIT_NO, str(exc)) from None
    except RegistryRefused as exc:
        raise _Fail(EXIT_CONFIG, f"the database refused the registry: {exc}") from None
    except DatabaseUnavailable as exc:
        raise _Fail(EXIT_DATABASE, f"lost the database: {exc}") from None
    finally:
        dispatcher.close()
    if result.output_tail:
        sys.stdout.write(result.output_tail if result.output_tail.endswith("\n")
                         else result.output_tail + "\n")
    # As `tickq run`: exit 0 only when the run ended ok.
    if "signal" in got:
        return 128 + got["signal"]
    return EXIT_OK if result.outcome == "ok" else EXIT_NO


def cmd_history(args: argparse.Namespace) -> int:
    with _connect(args) as conn:
        if args.run is None:
            rows = conn.execute(db.load_query("agent_runs"),
                                {"name": args.name, "limit": args.limit}).fetchall()
        else:
            rows = conn.execute(db.load_query("agent_transcript"),
                                {"name": args.name, "run_id": args.run}).fetchall()
    if args.json:
        print(json.dumps(rows, default=_json_value, indent=2))
        return EXIT_OK
    if args.run is not None:
        if not rows:
            raise _Fail(EXIT_NO, f"no transcript of run {args.run} of agent {args.name!r}")
        for row in rows:
            print(_turn_text(row["turn"], row["entry"]))
        return EXIT_OK
    if not rows:
        print(f"no runs of agent {args.name!r} yet")
        return EXIT_OK
    print(_table(
        ["run", "claimed", "trigger", "outcome", "turns", "duration", "output (last line)"],
        [[str(r["run_id"]), _when(r["claimed_at"]), r["run_trigger"], r["outcome"],
          str(r["turns"]), "-" if r["duration_s"] is None else f"{r['duration_s']:.1f}s",
          _last_line(r["output_tail"])] for r in rows],
    ))
    return EXIT_OK


def cmd_exec(args: argparse.Namespace) -> int:
    """The agent runner: what the dispatcher starts for a claim of agent.<name>."""
    from tickq.agents import runner

    registry = _registry(args, required=True)
    assert registry is not None
    try:
        url = runner.database_url(args.database_url)
    except Exception as exc:
        raise _Fail(EXIT_DATABASE, f"cannot start the embedded PostgreSQL: {exc}") from None
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


def _json_value(value: Any) -> Any:
    if hasattr(value, "isoformat"):
        return value.isoformat()
    if hasattr(value, "total_seconds"):
        return value.total_seconds()
    return str(value)


def _when(value: Any) -> str:
    return value.strftime("%Y-%m-%d %H:%M:%S") if value is not None else "-"


def _rows(pairs: list[tuple[str, str]]) -> str:
    width = max(len(k) for k, _ in pairs)
    return "\n".join(f"{k.ljust(width)}  {v}" for k, v in pairs)


def _table(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows, strict=False)]
    lines = [header, ["-" * w for w in widths], *rows]
    return "\n".join("  ".join(str(x).ljust(w) for x, w in zip(line, widths)).rstrip()
                     for line in lines)


# ---------------------------------------------------------------- argument parsing


def _positive_int(text: str) -> int:
    if not text.isdigit() or int(text) <= 0 or int(text) > 2**63 - 1:
        raise argparse.ArgumentTypeError(f"an agent id is a positive whole number, got {text!r}")
    return int(text)


def _schedule_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--prompt", help="the prompt text, or - to read it from standard input")
    p.add_argument("--prompt-file", help="read the prompt from this file")
    p.add_argument("--every", type=_seconds, metavar="DURATION",
                   help="run every DURATION (1m to 366d), clock-aligned, e.g. 1h")
    p.add_argument("--at", type=_times, action="append", metavar="HH:MM[,HH:MM]",
                   help="run at these times of day (repeatable)")
    p.add_argument("--on", type=_weekdays, metavar="DAYS",
                   help="on these weekdays with --at, e.g. mon-fri or sat,sun")
    p.add_argument("--timezone", metavar="ZONE",
                   help="IANA zone of --at, e.g. America/Chicago (default: the registry's)")
    p.add_argument("--turns", type=int, metavar="N",
                   help="model calls at most (1-6, default the registry's cap)")
    p.add_argument("--timeout", type=_seconds, metavar="DURATION",
                   help="the run's watchdog (at most 10m, default the registry's cap)")
    p.add_argument("--owner", help="a label for who the agent belongs to")
    p.add_argument("--tools", metavar="A,B", help="the registry tools it may call ('' for none)")


def add_commands(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    agent = sub.add_parser("agent", help="user-built agents: a saved prompt on a schedule",
                           description="User-built agents: a saved prompt on a schedule, one "
                           "queue row each, at most six turns and a ten-minute watchdog.")
    verbs = agent.add_subparsers(dest="agent_command", required=True, metavar="ACTION")

    def add(name: str, func: Callable[[argparse.Namespace], int], text: str,
            with_name: bool = True) -> argparse.ArgumentParser:
        p = verbs.add_parser(name, parents=[common], help=text, description=text)
        if with_name:
            p.add_argument("name", help="the agent's name (a-z 0-9 _ -)")
        p.set_defaults(func=_guarded(func))
        return p

    p = add("add", cmd_add, "add an agent")
    _schedule_options(p)
    p.add_argument("--paused", action="store_true", help="add it paused")
    _schedule_options(add("edit", cmd_edit, "change an agent's prompt, schedule or limits"))
    add("show", cmd_show, "an agent and its next five runs, in its zone and in UTC").add_argument(
        "--json", action="store_true", help="print JSON")
    add("list", cmd_list, "every agent", with_name=False).add_argument(
        "--json", action="store_true", help="print JSON")
    add("pause", _simple("pause_agent", "paused"), "stop scheduling an agent")
    add("resume", _simple("resume_agent", "resumed"),
        "schedule a paused agent again (from its next slot)")
    add("remove", _simple("remove_agent", "removed"), "remove an agent (its history stays)")
    add("run", cmd_run, "run an agent now through the queue (counted against the slots)")
    p = add("history", cmd_history, "an agent's runs, or one run's transcript")
    p.add_argument("--run", type=_positive_int, metavar="ID", help="the transcript of this run")
    p.add_argument("--limit", type=int, default=20, help="runs shown (default 20)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p = add("exec", cmd_exec, "the agent runner the dispatcher starts (one agent run)",
            with_name=False)
    p.add_argument("agent_id", type=_positive_int, help="the agent's id")
