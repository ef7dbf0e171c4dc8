"""What most commands do first: read the registry, find the database, open the queue.

Failures are raised as the classes of tickq.db.errors; cli/main.py turns each into its one line
and exit status through the one map there.
"""

from __future__ import annotations

import argparse
import signal
from pathlib import Path
from typing import Any

from tickq import db
from tickq.db.api import session
from tickq.db.errors import InvalidInput
from tickq.host.stops import StopEvent
from tickq.registry import (
    Registry,
    RegistryError,
    default_agent_runner,
    load_registry,
)


def registry(args: argparse.Namespace) -> Registry:
    """The registry file the command names (RegistryError lists its problems)."""
    found = load_registry(args.registry)
    if not found.kinds and found.agents is None and not getattr(args, "allow_empty", False):
        # Syncing it would retire every kind of the queue: a truncated or wrong file, mostly. A
        # registry that only sets the bounds of user-built agents means to have no kinds.
        raise InvalidInput(f"{found.path}: no kinds; syncing it would retire every kind "
                           "(pass --allow-empty to mean that)")
    return found


def registry_if_any(args: argparse.Namespace) -> Registry | None:
    """The registry when its file exists (commands that can do without one)."""
    return load_registry(args.registry) if Path(args.registry).exists() else None


def agents_cannot_run(found: Registry | None) -> str | None:
    """The one line saying this Python cannot run the registry's agents (no httpx: a plain
    install), when the registry has [agents] and runs them with tickq's own runner."""
    if found is None or found.agents is None or found.agents.runner != default_agent_runner():
        return None
    from tickq.agents import extra

    return extra.missing()


def url(args: argparse.Namespace) -> str:
    """--database-url, else DATABASE_URL, else the embedded server's database of the registry
    folder (the server started now)."""
    return session.url(args.database_url, getattr(args, "registry", None))


def timeouts(args: argparse.Namespace) -> db.Timeouts:
    """The registry's db_* timeouts when its file exists and loads, else the defaults: a
    command that does not need the registry does not fail on it."""
    try:
        found = registry_if_any(args) if hasattr(args, "registry") else None
    except RegistryError:  # the commands that need the registry say so themselves
        found = None
    return db.DEFAULT_TIMEOUTS if found is None else db.timeouts_of(found.settings)


def open_queue(args: argparse.Namespace, loaded: Registry | None = None) -> session.Connection:
    """A connection to the configured queue, migrated, with the registry's timeouts (those of
    `loaded` when the command has read it already)."""
    found = timeouts(args) if loaded is None else db.timeouts_of(loaded.settings)
    return session.open_queue(url(args), found)


def on_signals(stop: StopEvent) -> dict[str, int]:
    """SIGTERM/SIGINT stop claiming and pass the same signal to running commands."""
    got: dict[str, int] = {}

    def handler(signum: int, _frame: Any) -> None:
        got["signal"] = signum
        stop.stop(signum)

    signal.signal(signal.SIGTERM, handler)
    signal.signal(signal.SIGINT, handler)
    return got
