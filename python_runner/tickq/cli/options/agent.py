"""`agent add|edit|show|list|pause|resume|remove|run|history|exec`: user-built agents."""

from __future__ import annotations

import argparse

from tickq.cli.options import Add, Subparsers, values


def build(add: Add, sub: Subparsers, common: argparse.ArgumentParser) -> None:
    group = sub.add_parser("agent", help="user-built agents: a saved prompt on a schedule",
                           description="User-built agents: a saved prompt on a schedule, one "
                           "queue row each, at most six turns and a ten-minute watchdog.")
    verbs = group.add_subparsers(dest="agent_command", required=True, metavar="ACTION")

    def verb(name: str, command: str, text: str, with_name: bool = True,
             ) -> argparse.ArgumentParser:
        p = verbs.add_parser(name, parents=[common], help=text, description=text)
        if with_name:
            p.add_argument("name", help="the agent's name (a-z 0-9 _ -)")
        p.set_defaults(func=f"agents:{command}")
        return p

    p = verb("add", "cmd_add", "add an agent")
    _agent_options(p)
    p.add_argument("--paused", action="store_true", help="add it paused")
    _agent_options(verb("edit", "cmd_edit", "change an agent's prompt, schedule or limits"))
    verb("show", "cmd_show", "an agent and its next five runs, in its zone and in UTC"
         ).add_argument("--json", action="store_true", help="print JSON")
    verb("list", "cmd_list", "every agent", with_name=False).add_argument(
        "--json", action="store_true", help="print JSON")
    verb("pause", "cmd_change", "stop scheduling an agent")
    verb("resume", "cmd_change", "schedule a paused agent again (from its next slot)")
    verb("remove", "cmd_change", "remove an agent (its history stays)")
    verb("run", "cmd_run", "run an agent now through the queue (counted against the slots)")
    p = verb("history", "cmd_history", "an agent's runs, or one run's transcript")
    p.add_argument("--run", type=values.agent_id, metavar="ID", help="the transcript of this run")
    p.add_argument("--limit", type=int, default=20, help="runs shown (default 20)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p = verb("exec", "cmd_exec", "the agent runner the dispatcher starts (one agent run)",
             with_name=False)
    p.add_argument("agent_id", type=values.agent_id, help="the agent's id")


def _agent_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--prompt", help="the prompt text, or - to read it from standard input")
    p.add_argument("--prompt-file", help="read the prompt from this file")
    p.add_argument("--every", type=values.duration, metavar="DURATION",
                   help="run every DURATION (1m to 366d), clock-aligned, e.g. 1h")
    p.add_argument("--at", type=values.times, action="append", metavar="HH:MM[,HH:MM]",
                   help="run at these times of day (repeatable)")
    p.add_argument("--on", metavar="DAYS",
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
    p.add_argument("--timeout", type=values.duration, metavar="DURATION",
                   help="the run's watchdog (at most 10m, default the registry's cap)")
    p.add_argument("--owner", help="a label for who the agent belongs to")
    p.add_argument("--tools", metavar="A,B", help="the registry tools it may call ('' for none)")
