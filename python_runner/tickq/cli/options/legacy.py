"""`legacy import` and `legacy check`: moving off an old orchestrator."""

from __future__ import annotations

import argparse
import os

from tickq.cli.options import Add, Subparsers, values


def build(add: Add, sub: Subparsers, common: argparse.ArgumentParser) -> None:
    """Without the common options: these read files (import --write and check also ask a queue,
    by their own --database-url)."""
    files = argparse.ArgumentParser(add_help=False)
    files.add_argument(
        "--registry", default=os.environ.get("TICKQ_REGISTRY", "registry.toml"),
        help="the registry file (default: $TICKQ_REGISTRY or ./registry.toml)",
    )
    text = ("move old schedulers' jobs (crontabs, cron.d files, systemd timers, launchd agents, "
            "an orchestrator's script) into the registry")
    group = sub.add_parser("legacy", help=text, description=text)
    actions = group.add_subparsers(dest="action", required=True, metavar="ACTION")
    imp = actions.add_parser(
        "import", parents=[files],
        help="print (or --write) the kinds that replace old files' jobs",
        description="Print the kinds that replace the jobs of each FILE (a crontab, /etc/crontab, "
        "a cron.d file, a systemd .timer with its .service beside it, a launchd .plist, a script "
        "of one command per line), naming in one line each what cannot move. --write appends "
        "them and comments the moved lines of crontabs and scripts as `#tickq:KIND# <old line>`.",
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
    imp.add_argument("--every", type=values.duration, default=3600, metavar="DURATION",
                     help="cadence of a script's lines (default 1h); crontab lines keep theirs")
    imp.add_argument("--timeout", type=values.duration, default=None, metavar="DURATION",
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
