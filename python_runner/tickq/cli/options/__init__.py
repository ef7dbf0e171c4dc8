"""Every command's arguments, one module per group of commands (GROUPS: the group's name is its
module's). The parser is built whole for --help and completion, and for a command only that
command's group (cli/main.py), so a command imports the options of its group alone; a command's
module (named "module:function" here) is imported only when that command runs.

Each group's module has `build(add, sub, common)`: `add(name, command, help)` adds a command
with the common options (--registry, --database-url, ...) and returns its parser; `sub` and
`common` are for the groups whose commands have actions of their own (legacy, agent, roles).
"""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Callable

# A command: its function, or "module:function" of tickq.cli, imported when it runs.
Command = Callable[[argparse.Namespace], int] | str
Add = Callable[[str, Command, str], argparse.ArgumentParser]
Subparsers = argparse._SubParsersAction

# Each command's group: the module of this package that adds its arguments.
GROUPS = {
    **dict.fromkeys(("tick", "run", "sync", "migrate", "psql", "demo"), "queue"),
    **dict.fromkeys(("status", "metrics", "explain"), "status"),
    "check": "check", "simulate": "check",
    **dict.fromkeys(("pause", "resume", "cancel", "forget"), "operator"),
    **dict.fromkeys(("report", "serve", "history", "upcoming", "next", "schedule"), "page"),
    "legacy": "legacy", "agent": "agent",
    **dict.fromkeys(("server", "launchd", "systemd", "cron", "roles", "completion"), "machine"),
}


def build(group: str, add: Add, sub: Subparsers, common: argparse.ArgumentParser) -> None:
    """Add the commands of `group` (its module imported now)."""
    importlib.import_module(f"{__name__}.{group}").build(add, sub, common)
