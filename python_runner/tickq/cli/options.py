"""Every command's arguments, one function per group of commands (GROUPS). The parser is built
whole for --help and completion, and for a command only that command's group (cli/main.py); a
command's module (named "module:function" here) is imported only when that command runs.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from datetime import UTC, datetime

from tickq.registry.durations import parse_duration

# A command: its function, or "module:function" of tickq.cli, imported when it runs.
Command = Callable[[argparse.Namespace], int] | str
Add = Callable[[str, Command, str], argparse.ArgumentParser]

RUN_EXITS = """\
The command's output streams to stdout as it comes; tickq's log and the outcome line
("tickq: run 12 of KIND: failed, exit 3, 0.4s") go to stderr. Exit statuses:
  0        the run ended ok
  1        it did not: failed, timed out, could not start, or was not claimed
           (unknown kind, already running, no free slot)
  2        invalid registry or configuration
  3        the database cannot be reached
  128+N    stopped by signal N (the command got the same signal)"""

# Each command's group: the function below that adds its arguments.
GROUPS = {
    **dict.fromkeys(("tick", "run", "sync", "migrate", "psql", "demo"), "queue"),
    "status": "status", "check": "check", "simulate": "check",
    "pause": "operator", "resume": "operator", "cancel": "operator",
    **dict.fromkeys(("report", "serve", "history", "upcoming"), "page"),
    "legacy": "legacy", "agent": "agent",
    **dict.fromkeys(("server", "launchd", "systemd", "cron", "roles", "completion"), "machine"),
}

# `--on mon-fri` expands a range in this order (the database checks the days themselves).


# ---------------------------------------------------------------- values


def _duration(text: str) -> int:
    try:
        return parse_duration(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _hours(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"hours must be a number, got {text!r}") from None
    if not 0 < value <= 24 * 90:
        raise argparse.ArgumentTypeError(f"hours must be more than 0 and at most 2160, got {text}")
    return value


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number, got {text!r}") from None
    if not 1 <= value <= 10_000:
        raise argparse.ArgumentTypeError(f"must be from 1 to 10000, got {text}")
    return value


def _instant(text: str) -> datetime:
    try:
        value = datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"must be an ISO 8601 time like 2026-03-01T00:00:00Z, got {text!r}") from None
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number, got {text!r}") from None
    if not 1 <= value <= 100_000:
        raise argparse.ArgumentTypeError(f"must be from 1 to 100000, got {text}")
    return value


def _id(text: str) -> int:
    if not text.isdigit() or int(text) <= 0 or int(text) > 2**63 - 1:
        raise argparse.ArgumentTypeError(f"an agent id is a positive whole number, got {text!r}")
    return int(text)


def _weekdays(text: str) -> list[str]:
    """"mon-fri", "sat,sun", "mon,wed-fri" -> the weekday names; "1st mon", "last fri" are
    passed on as they are (the database checks them)."""
    from tickq.db.contract import WEEKDAYS  # the database's names (tickq.db imports psycopg)

    days: list[str] = []
    for part in (p.strip() for p in text.lower().split(",")):
        if " " in part:  # an nth weekday
            days.append(" ".join(part.split()))
            continue
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


# ---------------------------------------------------------------- the queue's commands


REPLACE_QUEUE = ("let this registry's sync retire the kinds of a queue another registry "
                 "synced last (replace that project's queue)")


def queue(add: Add) -> None:
    tick = add("tick", "queue:cmd_tick", "sync the registry, run what is due, report, and exit")
    run = add("run", "queue:cmd_run", "run one kind now (counted against the slots)")
    run.add_argument("kind")
    run.epilog = RUN_EXITS
    run.formatter_class = argparse.RawDescriptionHelpFormatter
    run.add_argument("--yes-i-ran-this-by-hand", action="store_true",
                     help="confirm the first run of an irreversible kind without a terminal")
    sync = add("sync", "queue:cmd_sync", "sync the registry into the queue and show the drift")
    for p in (tick, run, sync):
        p.add_argument("--replace-queue", action="store_true", help=REPLACE_QUEUE)
    add("migrate", "queue:cmd_migrate", "apply the schema to the database")
    add("psql", "queue:cmd_psql", "open psql on the configured database").add_argument(
        "psql_args", nargs=argparse.REMAINDER
    )
    add("demo", "queue:cmd_demo",
        "a real tick of the example registry in a fresh demo database")


def status(add: Add) -> None:
    p = add("status", "status:cmd_status", "the queue, with stale-due warnings on top")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument("--wide", action="store_true",
                   help="every column, full times (no fitting to the terminal)")
    p.add_argument(
        "--check", action="store_true",
        help="for monitors: one line per problem (a kind stale, failing past alert_after or "
             "stuck past its lease; no tick for two tick lengths; an unusable ledger folder; a "
             "spool folder not read, or spool files moved aside) "
             "and exit 1, else exit 0")
    p.add_argument("--retired", action="store_true",
                   help="list the retired kinds (gone from the registry, runs kept) instead")
    p.add_argument("--watch", type=float, nargs="?", const=2.0, metavar="SECONDS",
                   help="redraw every SECONDS (default 2; 0.5 to 86400) until Ctrl-C")
    add("metrics", "watch:cmd_metrics",
        "print the queue as Prometheus metrics (text format; `serve` answers /metrics too)")
    exp = add("explain", "watch:cmd_explain",
              "why a kind is or is not running now: running, paused, disabled, unarmed, "
              "waiting (and for what) or idle until its next slot")
    exp.add_argument("kind")
    exp.add_argument("--json", action="store_true", help="print JSON")


def check(add: Add) -> None:
    """`check` and `simulate`, with the options they share."""
    chk = add("check", "check:cmd_check", "exit 1 unless the cadences fit the slots with margin "
              "and no kind waits past stale_after in the worst case")
    chk.add_argument("--suggest", action="store_true",
                     help="when the worst case starves, propose the smallest change that passes")
    sim = add("simulate", "check:cmd_simulate",
              "run the registry with a moved clock; exit 1 on starvation")
    sim.add_argument("--hours", type=float, default=None,
                     help="simulated hours (default: every schedule once, plus stale_after)")
    sim.add_argument("--at", type=_instant, default=None, metavar="T",
                     help="deploy the registry at T instead of now (ISO 8601; without an "
                          "offset, UTC), e.g. to replay a month end or a clock change")
    for p in (chk, sim):
        p.add_argument(
            "--durations", choices=("timeout", "observed"), default="timeout",
            help="each run holds its slot for its timeout (worst case, default) or the queue's p95",
        )


def operator(add: Add) -> None:
    pause = add("pause", "operator:cmd_pause",
                "stop claiming a kind until resumed, for a while or until a time (a run going "
                "on finishes; `tickq run` still runs it by hand)")
    pause.add_argument("kind")
    when = pause.add_mutually_exclusive_group()
    when.add_argument("--for", dest="for_", metavar="DURATION", help='e.g. "2h", "1d"')
    when.add_argument("--until", metavar="TIME",
                      help='"2026-12-01 09:00" or "18:00" (the registry\'s zone unless given)')
    pause.add_argument("--reason", help="why, shown in tickq status")
    add("resume", "operator:cmd_resume", "claim a paused kind again").add_argument("kind")
    cancel = add("cancel", "operator:cmd_cancel",
                 "ask the dispatcher holding a run (on any host) to stop it: its process tree "
                 "is stopped within seconds and the run ends `cancelled` (no retry, not a "
                 "failure; the kind's next slot as after a normal finish)")
    cancel.add_argument("target", metavar="RUN_ID|KIND", help="a run id, or a kind: its live run")
    cancel.add_argument("--reason", help="why, recorded on the run with who asked")
    add("forget", "operator:cmd_forget", "delete a retired kind and its runs (`tickq status "
        "--retired` lists them); a kind still in the registry is refused").add_argument("kind")


def page(add: Add) -> None:
    rep = add("report", "page:cmd_report",
              "write the status page as one self-contained HTML file")
    rep.add_argument("--html", required=True, metavar="FILE", help="where to write the page")
    rep.add_argument("--hours", type=_hours, default=24.0, help="window (default 24)")
    srv = add("serve", "page:cmd_serve", "serve the status page, read-only, on 127.0.0.1")
    srv.add_argument("--port", type=int, default=8787, help="port (default 8787; 0: any free)")
    srv.add_argument(
        "--host", default=None,
        help="address to listen on (default 127.0.0.1; any other address must be given here)",
    )
    srv.add_argument(
        "--allowed-host", action="append", metavar="NAME",
        help="a Host name to answer besides the bound address's own, e.g. the reverse proxy's "
        "(repeatable; any other name gets 421, against DNS rebinding)",
    )
    srv.add_argument("--hours", type=_hours, default=24.0, help="window (default 24)")
    his = add("history", "history:cmd_history",
              "a kind's runs, newest first (or one run's whole output)")
    his.add_argument("kind", nargs="?", help="the kind")
    his.add_argument("--limit", type=_positive, default=20, help="runs to show (default 20)")
    his.add_argument("--run", type=int, metavar="ID", help="one run, with its whole output tail")
    his.add_argument("--json", action="store_true", help="print JSON")
    upc = add("upcoming", "history:cmd_upcoming", "what falls due next, in order")
    upc.add_argument("--hours", type=_hours, default=24.0, help="how far ahead (default 24)")
    upc.add_argument("--limit", type=_positive, default=50, help="rows (default 50)")
    upc.add_argument("--json", action="store_true", help="print JSON")
    nxt = add("next", "schedule:cmd_next",
              "a kind's next slots from its registry schedule, in its zone and in UTC")
    nxt.add_argument("kind", help="the kind")
    sch = add("schedule", "schedule:cmd_schedule",
              "the next slots of any cron string (no registry needed), in its zone and in UTC")
    sch.add_argument("expression", help='five fields or an @ form, e.g. "0 6 1 * *"')
    sch.add_argument("--timezone", default="UTC", help="its IANA zone (default UTC)")
    for p in (nxt, sch):
        p.add_argument("--count", type=_count, default=10, help="slots to show (default 10)")
        p.add_argument("--from", dest="after", type=_instant, default=None, metavar="T",
                       help="slots after this ISO 8601 time (default now; UTC without an offset)")
        p.add_argument("--json", action="store_true",
                       help="print a JSON list of {at, utc, timezone}")


def machine(add: Add, sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    """This machine's commands: the embedded server, the timers, roles, completion."""
    server = add("server", "server:cmd_server", "the embedded PostgreSQL (in $TICKQ_DATA_DIR "
                 "or the user data folder): is it running (exit 0) or not (exit 1); stop it "
                 "(the next command that needs it starts it again)")
    server.add_argument("action", choices=("status", "stop"))
    for name, actions, text in (
        ("launchd", ("print", "install", "uninstall"),
         "the macOS launchd agent that runs `tickq tick` every tick"),
        ("systemd", ("print", "install", "uninstall"),
         "the systemd user timer that runs `tickq tick` every tick (Linux)"),
        ("cron", ("print",), "a crontab line that runs `tickq tick` every tick"),
    ):
        p = add(name, f"timers:cmd_{name}", text)
        p.add_argument("action", choices=actions)
        p.add_argument("--name", help="timer name (default: the project, else the folder's name)")
        if name == "systemd":
            p.add_argument("--system", action="store_true", help="in /etc/systemd/system")
            p.add_argument("--run-as", metavar="USER", help="with --system: User= (default: you, "
                           "under sudo the one who ran it; root only when named)")
    text = "print sql/roles.sql: the owner, dispatcher and reader roles of a tickq database"
    roles = sub.add_parser("roles", help=text, description=text)
    roles.add_argument("action", choices=("print",))
    for role in ("owner", "dispatcher", "reader"):
        roles.add_argument(f"--{role}", default=f"tickq_{role}", help=f"the {role} role's name")
    roles.set_defaults(func="roles:cmd_roles")
    completion = add("completion", "completion:cmd_completion",
                     "print a shell completion script: source <(tickq completion bash)")
    completion.add_argument("shell", choices=("bash", "zsh", "kinds"),
                            help="bash or zsh; kinds lists the registry's kind names")


def legacy(sub: argparse._SubParsersAction) -> None:
    """These read files (import --write and check also ask a queue, by their own --database-url)."""
    files = argparse.ArgumentParser(add_help=False)
    files.add_argument(
        "--registry", default=os.environ.get("TICKQ_REGISTRY", "registry.toml"),
        help="the registry file (default: $TICKQ_REGISTRY or ./registry.toml)",
    )
    text = "move old schedulers' jobs (crontabs, an orchestrator's script) into the registry"
    group = sub.add_parser("legacy", help=text, description=text)
    actions = group.add_subparsers(dest="action", required=True, metavar="ACTION")
    imp = actions.add_parser(
        "import", parents=[files],
        help="print (or --write) the kinds that replace old files' jobs",
        description="Print the kinds that replace the jobs of each FILE (a crontab, /etc/crontab, "
        "a cron.d file, a script of one command per line), naming in one line each what cannot "
        "move. --write appends them and comments the moved lines as `#tickq:KIND# <old line>`.",
    )
    imp.add_argument("files", metavar="FILE", nargs="+")
    imp.add_argument("--write", action="store_true",
                     help="append the kinds to the registry and comment the moved lines")
    imp.add_argument("--chain", nargs=3, action="append", default=[],
                     metavar=("NAME", "FROM-LINE", "TO-LINE"), type=str,
                     help="make the commands of these lines one chain kind, in order (one FILE)")
    imp.add_argument("--irreversible", type=int, action="append", default=[], metavar="LINE",
                     help="the (usually commented) line of a lane run by hand: an irreversible "
                     "kind, never scheduled until a person runs it once (one FILE)")
    imp.add_argument("--every", type=_duration, default=3600, metavar="DURATION",
                     help="cadence of a script's lines (default 1h); crontab lines keep theirs")
    imp.add_argument("--timeout", type=_duration, default=None, metavar="DURATION",
                     help="timeout of jobs the old system set none for (default: --every, and "
                     "never longer than the shortest gap between two of a job's slots)")
    imp.add_argument("--database-url", default=None, metavar="URL",
                     help="the queue that judges the kinds and the tick (always with --write; "
                     "default: $DATABASE_URL, else the embedded server)")
    imp.set_defaults(func="legacy_import:cmd_import")
    chk = actions.add_parser(
        "check", parents=[files],
        help="exit 1 unless every kind with a `legacy` line runs what its old job ran",
        description="Exit 1 unless every kind and step with a `legacy` line runs what its job in "
        "the FILEs ran (argv, cwd, env), every moved line names an enabled (or irreversible) "
        "kind, no job runs in both places, no timeout is shorter than the old watchdog's.",
    )
    chk.add_argument("files", metavar="FILE", nargs="+")
    chk.add_argument(
        "--database-url", default=None, metavar="URL",
        help="also fail while an enabled irreversible kind of the queue at URL is not armed "
        "(only when given: the check otherwise reads files only)",
    )
    chk.set_defaults(func="legacy:cmd_check")


def agent(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    group = sub.add_parser("agent", help="user-built agents: a saved prompt on a schedule",
                           description="User-built agents: a saved prompt on a schedule, one "
                           "queue row each, at most six turns and a ten-minute watchdog.")
    verbs = group.add_subparsers(dest="agent_command", required=True, metavar="ACTION")

    def add(name: str, command: str, text: str, with_name: bool = True,
            ) -> argparse.ArgumentParser:
        p = verbs.add_parser(name, parents=[common], help=text, description=text)
        if with_name:
            p.add_argument("name", help="the agent's name (a-z 0-9 _ -)")
        p.set_defaults(func=f"agents:{command}")
        return p

    p = add("add", "cmd_add", "add an agent")
    _agent_options(p)
    p.add_argument("--paused", action="store_true", help="add it paused")
    _agent_options(add("edit", "cmd_edit", "change an agent's prompt, schedule or limits"))
    add("show", "cmd_show", "an agent and its next five runs, in its zone and in UTC"
        ).add_argument("--json", action="store_true", help="print JSON")
    add("list", "cmd_list", "every agent", with_name=False).add_argument(
        "--json", action="store_true", help="print JSON")
    add("pause", "cmd_change", "stop scheduling an agent")
    add("resume", "cmd_change", "schedule a paused agent again (from its next slot)")
    add("remove", "cmd_change", "remove an agent (its history stays)")
    add("run", "cmd_run", "run an agent now through the queue (counted against the slots)")
    p = add("history", "cmd_history", "an agent's runs, or one run's transcript")
    p.add_argument("--run", type=_id, metavar="ID", help="the transcript of this run")
    p.add_argument("--limit", type=int, default=20, help="runs shown (default 20)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p = add("exec", "cmd_exec", "the agent runner the dispatcher starts (one agent run)",
            with_name=False)
    p.add_argument("agent_id", type=_id, help="the agent's id")


def _agent_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--prompt", help="the prompt text, or - to read it from standard input")
    p.add_argument("--prompt-file", help="read the prompt from this file")
    p.add_argument("--every", type=_duration, metavar="DURATION",
                   help="run every DURATION (1m to 366d), clock-aligned, e.g. 1h")
    p.add_argument("--at", type=_times, action="append", metavar="HH:MM[,HH:MM]",
                   help="run at these times of day (repeatable)")
    p.add_argument("--on", type=_weekdays, metavar="DAYS",
                   help="on these weekdays with --at, e.g. mon-fri, sat,sun or '1st mon,last fri'")
    p.add_argument("--days", metavar="N[,N]",
                   help="on these days of the month with --at, e.g. 1,15 or -1 (the last day)")
    p.add_argument("--months", metavar="MONTHS",
                   help="in these months with --at, e.g. jan,jul or 1,7")
    p.add_argument("--cron", metavar="EXPR",
                   help="a five-field cron string instead, e.g. '0 6 1 * *' (in --timezone)")
    p.add_argument("--timezone", metavar="ZONE",
                   help="IANA zone of --at or --cron, e.g. America/Chicago (default: the "
                        "registry's)")
    p.add_argument("--turns", "--max-turns", dest="turns", type=int, metavar="N",
                   help="model calls at most (1-6, default the registry's cap; the agent's "
                        "max_turns)")
    p.add_argument("--timeout", type=_duration, metavar="DURATION",
                   help="the run's watchdog (at most 10m, default the registry's cap)")
    p.add_argument("--owner", help="a label for who the agent belongs to")
    p.add_argument("--tools", metavar="A,B", help="the registry tools it may call ('' for none)")
