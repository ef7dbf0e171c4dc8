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
    text = "move an old orchestrator's lines into the registry, and check parity"
    group = sub.add_parser("legacy", help=text, description=text)
    actions = group.add_subparsers(dest="action", required=True, metavar="ACTION")
    imp = actions.add_parser(
        "import", parents=[files],
        help="print (or --write) the kinds that replace an old script's or crontab's lines",
        description="Print the registry kinds that replace FILE's lines (a shell script of one "
        "command per line, or a crontab). With --write, append them to the registry and comment "
        "the moved lines as `#tickq:KIND# <old line>`: uncommenting a line is the rollback.",
    )
    imp.add_argument("file", metavar="FILE")
    imp.add_argument("--write", action="store_true",
                     help="append the kinds to the registry and comment the moved lines")
    imp.add_argument("--chain", nargs=3, action="append", default=[],
                     metavar=("NAME", "FROM-LINE", "TO-LINE"), type=str,
                     help="make the commands of these lines one chain kind, in order")
    imp.add_argument("--irreversible", type=int, action="append", default=[], metavar="LINE",
                     help="the (usually commented) line of a lane run by hand: an irreversible "
                     "kind, never scheduled until a person runs it once")
    imp.add_argument("--every", type=values.duration, default=3600, metavar="DURATION",
                     help="cadence of a script's lines (default 1h); crontab lines keep theirs")
    imp.add_argument("--timeout", type=values.duration, default=None, metavar="DURATION",
                     help="timeout of lines without a `timeout` wrapper (default: --every)")
    imp.add_argument(
        "--database-url", default=None, metavar="URL",
        help="with --write, the queue whose rules (registry_problems) judge each kind before it "
        "is written (default: $DATABASE_URL, else the embedded server)",
    )
    imp.set_defaults(func="legacy:cmd_import")
    chk = actions.add_parser(
        "check", parents=[files],
        help="exit 1 unless every kind with a `legacy` line runs that line's command",
        description="Exit 1 unless every registry kind and step with a `legacy` line runs the "
        "same command, every moved line of FILE names an enabled (or irreversible) kind, no "
        "line is both active in FILE and enabled in tickq, no timeout is shorter than the old "
        "watchdog's, and no irreversible kind's old line is active.",
    )
    chk.add_argument("file", metavar="FILE")
    chk.add_argument(
        "--database-url", default=None, metavar="URL",
        help="also fail while an enabled irreversible kind of the queue at URL is not armed "
        "(only when given: the check otherwise reads files only)",
    )
    chk.set_defaults(func="legacy:cmd_check")
