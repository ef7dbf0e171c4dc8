"""The `tickq legacy import|check` commands: move an old orchestrator's lines into the registry,
and check that the registry still runs what the old lines ran.

Exit statuses: 0 done / parity holds, 1 parity fails, 2 invalid input (a file that cannot be
read, a bad --chain range, a registry that is not TOML), 3 --database-url did not answer.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import tomllib
from pathlib import Path

from tickq.db.api import legacy, session
from tickq.db.api import registry as registry_api
from tickq.db.errors import EXIT_NO, EXIT_OK, InvalidInput
from tickq.legacy import importing, oldfile
from tickq.legacy import parity as legacy_check
from tickq.registry import RegistryError
from tickq.registry.parse import parse_registry


def _read(path: Path) -> str:
    try:
        return path.read_bytes().decode("utf-8-sig")  # a BOM is not part of the text
    except FileNotFoundError:
        raise InvalidInput(f"{path}: file not found") from None
    except UnicodeDecodeError as e:
        raise InvalidInput(f"{path}: not UTF-8 text: {e}") from None
    except OSError as e:
        raise InvalidInput(f"{path}: cannot read: {e.strerror or e}") from None


def _write(path: Path, text: str) -> None:
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


def _old_text(path: Path) -> str:
    try:
        text = oldfile.read(path)
    except oldfile.OldFileRefused as e:
        raise InvalidInput(str(e)) from None
    problem = oldfile.shape_problem(path, text)
    if problem:
        raise InvalidInput(problem)
    return text


def _vetted(args: argparse.Namespace, plan: importing.ImportPlan, registry_path: Path,
            registry_text: str) -> importing.ImportPlan:
    """`plan` without the kinds the queue's own rules (registry_problems) would refuse."""
    base = registry_path.absolute().parent

    with session.open_queue(session.url(args.database_url)) as conn:

        def judge(text: str) -> list[str]:
            try:
                found = registry_api.problems_of(conn, parse_registry(text, registry_path, base))
            except RegistryError as e:
                found = e.problems
            return [f"{p.key}: {p.message}" if p.key else p.message for p in found]

        try:
            return importing.vetted(plan, registry_text, judge)
        except importing.ImportRefused as e:
            raise InvalidInput(str(e)) from None


def _chains(args: argparse.Namespace) -> list[importing.Chain]:
    for name, first, last in args.chain:
        if not (first.isdigit() and last.isdigit() and int(first) <= int(last)):
            raise InvalidInput(f"--chain {name} {first} {last}: FROM-LINE and TO-LINE must be "
                           "line numbers, FROM-LINE <= TO-LINE")
    return [importing.Chain(name, int(first), int(last)) for name, first, last in args.chain]


def cmd_import(args: argparse.Namespace) -> int:
    chains = _chains(args)
    old_path, registry_path = Path(args.file), Path(args.registry)
    if args.write:
        try:
            oldfile.write_target(old_path)
        except oldfile.OldFileRefused as e:
            raise InvalidInput(str(e)) from None
    old_text = _old_text(old_path)
    registry_text = _read(registry_path) if registry_path.exists() else ""
    try:
        taken = tomllib.loads(registry_text).get("kinds", {})
    except tomllib.TOMLDecodeError as e:
        raise InvalidInput(f"{registry_path}: invalid TOML: {e}") from None
    try:
        plan = importing.plan_import(
            old_text, taken=taken, chains=chains, irreversible=args.irreversible,
            every=args.every, default_timeout=args.timeout,
            base=registry_path.absolute().parent.resolve(),
        )
    except importing.ImportRefused as e:
        raise InvalidInput(str(e)) from None
    if args.write and plan.kinds:
        plan = _vetted(args, plan, registry_path, registry_text)
    for line, reason in plan.skipped:
        span = f"{line.first}" if line.first == line.last else f"{line.first}-{line.last}"
        print(f"{old_path}:{span}: left as it is: {reason}", file=sys.stderr)
    if not plan.kinds:
        print(f"{old_path}: no line to move", file=sys.stderr)
        return EXIT_OK
    header = f"# Moved from {old_path.name} by `tickq legacy import`; `legacy` is the old line.\n"
    addition = header + "\n" + plan.registry_text()
    if not args.write:
        sys.stdout.write(addition)
        print(f"# {len(plan.kinds)} kind(s); nothing written (add --write to append them to "
              f"{registry_path} and comment the old lines)", file=sys.stderr)
        return EXIT_OK
    new_registry = importing.joined(registry_text, addition)
    try:
        tomllib.loads(new_registry)
    except tomllib.TOMLDecodeError as e:  # a bug here must not leave a registry tickq refuses
        raise InvalidInput(f"the kinds would make {registry_path} invalid TOML: {e}") from None
    # The old file first: if the registry cannot be written, put it back, so that a failure
    # never leaves both the old line and its kind running.
    _write(oldfile.write_target(old_path), importing.apply_import(plan, old_text))
    try:
        _write(registry_path, new_registry)
    except OSError:
        _write(old_path, old_text)
        raise
    for kind in plan.kinds:
        lines = ", ".join(str(line.first) for line, _ in kind.lines)
        print(f"{kind.name}: {old_path}:{lines} -> {registry_path}")
    return EXIT_OK


def cmd_check(args: argparse.Namespace) -> int:
    old_path = Path(args.file)
    try:
        old_text = oldfile.read(old_path)
    except oldfile.OldFileRefused as e:
        raise InvalidInput(str(e)) from None
    try:
        entries = legacy_check.registry_entries(Path(args.registry))
    except legacy_check.InvalidInput as e:
        raise InvalidInput(str(e)) from None
    failures, notes = legacy_check.check(old_text, str(old_path), entries)
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
