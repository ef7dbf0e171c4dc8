"""One job of an old scheduler (a crontab line, a systemd timer with its service, a launchd
agent), read from its file into what tickq needs to run it the same way: the record every reader
of an old file returns and the import and the parity check consume.

A reader never raises for a job it cannot move: it returns a `Refusal` naming the file, the
place in it and the reason, and goes on with the next job. Only a file it cannot read at all is
refused as a whole (also a `Refusal`, with `where` empty).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class OldCommand:
    """One program the old system started, exactly as it started it."""

    argv: tuple[str, ...]  # after the old system's own quoting and variable expansion
    cwd: str | None = None  # where it ran (absolute; an orchestrator script's `cd DIR` is
    # relative to the registry's folder), None: the registry's folder
    env: Mapping[str, str] = field(default_factory=dict)  # what the old system set for it
    ignore_failure: bool = False  # systemd's "-" prefix: a failure does not stop what follows
    name: str | None = None  # a step name when the job is a chain (ExecStartPre=...)


@dataclass(frozen=True)
class OldJob:
    """A job to import. `schedule` holds registry keys exactly as the registry writes them
    (`every`/`offset` as duration strings, `at`, `on`, `days`, `months`, `cron`, `timezone`,
    `catch_up`), so the import writes them as they are and the database judges them."""

    source: Path  # the file the job was read from
    where: str  # the place in it, for messages: "12" (a line: "file:12: ..."), "3-4" (a
    # continued line), "backup.timer", "com.x.agent"
    legacy: str  # the job's identity in its source, kept as the kind's `legacy` key
    schedule: Mapping[str, Any]
    steps: tuple[OldCommand, ...]  # one: a plain kind; several: a chain, in order
    timeout: int | None = None  # seconds the old system let it run, when it had a limit
    notes: tuple[str, ...] = ()  # what differs from the old system, said once per kind
    user: str | None = None  # the user the old system ran it as, when the file names one
    name_hint: str = ""  # a word to name the kind by (the unit's or label's name)
    # Added for line-based files (crontabs, orchestrator scripts) and the import's defaults:
    lines: tuple[int, int] | None = None  # its physical lines (first, last), 1-based: where
    # `import --write` puts the `#tickq:KIND# ` marker; None for a file that is not rewritten
    moved_to: str | None = None  # the marker's "KIND" or "KIND/STEP": moved already
    dormant: bool = False  # kept commented in the old file (the old system does not run it):
    # imported only when asked for (`--irreversible LINE`), checked only once moved
    gap: int | None = None  # the shortest time in seconds between two of its slots, when the
    # reader knows it: the import's default timeout is never longer


@dataclass(frozen=True)
class Refusal:
    """A job (or a whole file, `where` empty) that is not imported, and why: one line."""

    source: Path
    where: str
    reason: str
    # Added: what the file says of the refused job, so the parity check can name it.
    lines: tuple[int, int] | None = None  # as OldJob.lines
    moved_to: str | None = None  # as OldJob.moved_to (a moved line that no longer reads)
    legacy: str | None = None  # as OldJob.legacy, when the job has an identity at all

    def line(self) -> str:
        place = f"{self.source}:{self.where}" if self.where else str(self.source)
        return f"{place}: {self.reason}"
