"""The `tickq legacy import|check` commands: move old schedulers' jobs (crontabs, an old
orchestrator's script; systemd timers and launchd agents as their readers join) into the
registry, and check that the registry still runs what the old jobs ran.

`legacy import` is legacy_import.py's; both read the old files with OldFiles. Exit statuses:
0 done / parity holds, 1 parity fails, 2 invalid input (a file that cannot be read or is of no
kind tickq reads, a bad --chain range, a registry that is not TOML), 3 --database-url did not
answer.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

from tickq.db.api import legacy, session
from tickq.db.errors import EXIT_NO, EXIT_OK, InvalidInput
from tickq.legacy import oldfile, readers
from tickq.legacy import parity as legacy_check
from tickq.legacy.oldjob import OldJob, Refusal


def read_text(path: Path) -> str:
    try:
        return path.read_bytes().decode("utf-8-sig")  # a BOM is not part of the text
    except FileNotFoundError:
        raise InvalidInput(f"{path}: file not found") from None
    except UnicodeDecodeError as e:
        raise InvalidInput(f"{path}: not UTF-8 text: {e}") from None
    except OSError as e:
        raise InvalidInput(f"{path}: cannot read: {e.strerror or e}") from None


def write_file(path: Path, text: str) -> None:
    """Replace `path` with `text` in one rename, keeping its mode, so a crash leaves either the
    old file or the new one. A symlink stays a symlink: the file it points to is replaced."""
    path = path.resolve()
    mode = path.stat().st_mode & 0o7777 if path.exists() else 0o644
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(text.encode("utf-8"))
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


class OldFiles:
    """The old files of one command: each one's text and what its reader found, and the lines
    saying why a file could not be read at all."""

    def __init__(self, paths: list[Path]) -> None:
        self.texts: dict[Path, str] = {}
        self.found: dict[Path, list[OldJob | Refusal]] = {}
        self.unread: list[str] = []
        for path in paths:
            try:
                text = oldfile.read(path)
            except oldfile.OldFileRefused as e:
                self.unread.append(str(e))
                continue
            found = readers.read(path, text)
            self.unread += [r.line() for r in found if isinstance(r, Refusal) and not r.where]
            self.texts[path] = text
            self.found[path] = [f for f in found if isinstance(f, OldJob) or f.where]

    def items(self) -> list[OldJob | Refusal]:
        return [item for found in self.found.values() for item in found]


def cmd_check(args: argparse.Namespace) -> int:
    files = OldFiles([Path(f) for f in args.files])
    if files.unread:  # one verdict needs every file read
        raise InvalidInput("\n".join(files.unread))
    try:
        entries = legacy_check.registry_entries(Path(args.registry))
    except legacy_check.InvalidInput as e:
        raise InvalidInput(str(e)) from None
    failures, notes = legacy_check.check([(str(p), f) for p, f in files.found.items()], entries)
    irreversible = sorted(e.target for e in entries.values()
                          if e.irreversible and e.enabled and "/" not in e.target)
    if irreversible and args.database_url:
        failures += _unarmed(args.database_url, irreversible)
    elif irreversible:
        notes.append("arming not checked: give --database-url to fail while an enabled "
                     "irreversible kind has had no first run by hand")
    for note in notes:
        print(f"note: {note}")
    for failure in failures:
        print(f"FAIL {failure}")
    with_legacy = sum(1 for e in entries.values() if e.legacy is not None)
    if failures:
        print(f"legacy check failed: {len(failures)} problem(s)", file=sys.stderr)
        return EXIT_NO
    print(f"legacy parity holds: {with_legacy} kind(s) and step(s) run what their old lines ran")
    return EXIT_OK


def _unarmed(url: str, kinds: list[str]) -> list[str]:
    """The enabled irreversible kinds the queue does not hold (never synced there, or retired)
    or holds unarmed: each waits for a sync and a person's first run, whatever the files say."""
    with session.connect(url) as conn:
        states = legacy.kind_states(conn, kinds)
    failures = []
    for kind in kinds:
        state = states.get(kind)
        if state in (None, "retired"):
            failures.append(f"irreversible kind {kind!r} is not in that queue: sync the registry "
                            f"(tickq sync) and run it once by hand (tickq run {kind})")
        elif state == "unarmed":
            failures.append(f"irreversible kind {kind!r} is enabled for its schedule but not "
                            f"armed: a person runs it once by hand first (tickq run {kind})")
    return failures
