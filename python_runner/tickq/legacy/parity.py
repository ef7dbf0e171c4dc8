"""`tickq legacy check`: the registry against the old file it replaced. Every kind and step with
a `legacy` line must run that line's command; moved lines must name kinds that run them; no line
may run in both places.

The registry is read by the runner's own loader (tickq.registry.load_registry), so the check
judges what tick would run; it needs no database."""

from __future__ import annotations

import os
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from tickq.host.programs import resolve
from tickq.legacy.shell import (
    OldLine,
    Translation,
    Untranslatable,
    read_old_file,
    registry_program,
    translate,
)
from tickq.registry import Kind, RegistryError, Step, load_registry
from tickq.registry.durations import format_duration

# ---------------------------------------------------------------- the parity check


class InvalidInput(Exception):
    """The registry or the old file cannot be read (exit 2)."""


@dataclass(frozen=True)
class Entry:
    """A kind or a chain's step as the runner would run it: its folder is absolute, a step's
    env includes its kind's."""

    target: str  # "KIND" or "KIND/STEP"
    argv: tuple[str, ...]
    timeout: int | None
    cwd: Path  # where it runs: its cwd, else the registry's folder (`base`)
    env: Mapping[str, str]
    legacy: str | None
    enabled: bool
    irreversible: bool
    is_chain: bool = False
    base: Path = Path(".")  # the registry's folder, against which an old line's `cd` is read


def registry_entries(path: Path) -> dict[str, Entry]:
    """Every kind and every step of the registry file at `path`, by target."""
    try:
        registry = load_registry(path)
    except RegistryError as e:
        raise InvalidInput(str(e)) from None
    base = Path(path).absolute().parent.resolve()
    entries: dict[str, Entry] = {}
    for name, kind in registry.kinds.items():
        entries[name] = _entry(name, kind, None, base)
        for step in kind.steps:
            entries[f"{name}/{step.name}"] = _entry(f"{name}/{step.name}", kind, step, base)
    return entries


def _entry(target: str, kind: Kind, step: Step | None, base: Path) -> Entry:
    if step is None:
        return Entry(target, kind.command, kind.timeout, kind.cwd or base, kind.env, kind.legacy,
                     kind.enabled, kind.irreversible, bool(kind.steps), base)
    # As the runner starts a step (tickq.dispatch.chain): its cwd else the kind's, both envs.
    return Entry(target, step.command, step.timeout, step.cwd or kind.cwd or base,
                 {**kind.env, **step.env}, step.legacy, kind.enabled, kind.irreversible,
                 base=base)


def first_difference(a: str, b: str) -> int:
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return i
    return min(len(a), len(b))


def _mismatch(target: str, what: str, ours: str, theirs: str) -> str:
    at = first_difference(ours, theirs)
    return (f"{_label(target)}: {what} differs from its legacy line at character {at + 1}\n"
            f"  tickq:  {ours}\n"
            f"  legacy: {theirs}\n"
            f"          {' ' * at}^")


def _label(target: str) -> str:
    kind, _, step = target.partition("/")
    return f'kind "{kind}", step "{step}"' if step else f'kind "{kind}"'


def check(old_text: str, old_name: str, entries: Mapping[str, Entry]) -> tuple[list[str],
                                                                              list[str]]:
    """(failures, notes): every way the registry and the old file disagree."""
    failures: list[str] = []
    notes: list[str] = []
    lines = read_old_file(old_text)
    for entry in entries.values():
        if entry.legacy is None or entry.is_chain:
            continue
        failures += _parity(entry, entry.legacy)
    found: set[str] = set()
    for line in lines:
        where = f"{old_name}:{line.first}"
        if line.moved_to is not None:
            found.add(line.moved_to)
            entry = entries.get(line.moved_to)
            kind = entries.get(line.moved_to.partition("/")[0])
            if entry is None:
                failures.append(f"{where}: moved to {_label(line.moved_to)}, which is not in the "
                                "registry: nothing runs this line now")
                continue
            if kind is not None and not kind.enabled and not kind.irreversible:
                failures.append(f"{where}: moved to {_label(line.moved_to)}, which is disabled: "
                                "nothing runs this line now")
            if entry.legacy is None:
                failures += _parity(entry, line.text, where)
            elif entry.legacy != line.text:
                at = first_difference(line.text, entry.legacy)
                failures.append(
                    f"{where}: the moved line differs from the legacy line of "
                    f"{_label(line.moved_to)} at character {at + 1}\n"
                    f"  old file: {line.text}\n  legacy:   {entry.legacy}\n"
                    f"            {' ' * at}^"
                )
            continue
        if not line.active:
            continue
        try:
            t = translate(line.text)
        except Untranslatable:
            continue  # the old orchestrator keeps running it; no kind can run the same
        for entry in entries.values():
            runs_it = entry.legacy == line.text or (entry.argv and entry.argv == t.argv)
            if not runs_it:
                continue
            found.add(entry.target)
            if entry.irreversible:
                failures.append(f"{where}: the old line of irreversible {_label(entry.target)} "
                                "is active: comment it (it must only run by hand, once, "
                                "through tickq)")
            elif entry.enabled:
                failures.append(f"{where}: still active while {_label(entry.target)} is "
                                "enabled: both would run it; comment the line as "
                                f"#tickq:{entry.target}# or disable the kind")
    failures += _step_order(lines, old_name, entries)
    for entry in entries.values():
        if entry.legacy is not None and entry.target not in found:
            notes.append(f"{_label(entry.target)}: its legacy line is not in {old_name}")
    return failures, notes


def _step_order(lines: list[OldLine], old_name: str, entries: Mapping[str, Entry]) -> list[str]:
    """A chain's steps must keep the order of their old lines: the old script ran them so, and
    a step may need what the one before it made."""
    where = {line.moved_to: line.first for line in lines if line.moved_to}
    failures = []
    for chain in (e for e in entries.values() if e.is_chain):
        steps = [t for t in entries if t.startswith(chain.target + "/") and t in where]
        in_file = sorted(steps, key=where.__getitem__)
        if steps != in_file:
            failures.append(
                f"{_label(chain.target)}: its steps run in another order than their old lines "
                f"in {old_name}: registry {', '.join(s.partition('/')[2] for s in steps)}; "
                f"old file {', '.join(s.partition('/')[2] for s in in_file)}"
            )
    return failures


def _parity(entry: Entry, old_line: str, where: str | None = None) -> list[str]:
    """The entry against one old line: the same argv, no shorter timeout, the same cwd/env."""
    label = _label(entry.target)
    try:
        old = translate(old_line)
    except Untranslatable as e:
        source = f"its old line at {where}" if where else "its legacy line"
        return [f"{label}: {source} cannot be run without a shell: {e}"]
    failures = []
    # By the rule tick and `check` start it by (tickq.host.programs): parity with a line is
    # worth nothing if the command cannot start.
    problem = resolve(entry.argv, entry.base, entry.cwd, entry.env).problem
    if problem:
        failures.append(f"{label}: command cannot start: {problem}")
    ours, theirs = _commands(entry, old)
    if ours != theirs:
        failures.append(_mismatch(entry.target, "the command", ours, theirs))
    if old.timeout is not None and (entry.timeout is None or entry.timeout < old.timeout):
        have = format_duration(entry.timeout) if entry.timeout else "none"
        failures.append(f"{label}: timeout {have} is shorter than the old line's "
                        f"{format_duration(old.timeout)}: a run the old watchdog let finish "
                        "would be killed")
    if entry.cwd != (entry.base / (old.cwd or ".")).resolve():
        shown = os.path.relpath(entry.cwd, entry.base) if entry.cwd != entry.base else None
        failures.append(f"{label}: cwd {shown or '(the registry folder)'} differs from the "
                        f"old line's cd {old.cwd or '(none)'}")
    if dict(entry.env) != dict(old.env):
        # Names only: env values may be secrets, and this output lands in CI logs.
        names = sorted(k for k in {*entry.env, *old.env} if entry.env.get(k) != old.env.get(k))
        failures.append(f"{label}: env differs from the old line's in {', '.join(names)}")
    return failures


def _commands(entry: Entry, old: Translation) -> tuple[str, str]:
    """(the entry's command, the old line's) joined, the old program named as the registry
    names the file the shell ran (after its `cd`); a program written another way that is the
    same file (`./bin/x`, an absolute path, a path through a symlink) counts as the same."""
    program = registry_program(old.argv[0], old.cwd, entry.base)
    ours = entry.argv[0] if entry.argv else ""
    if "/" in ours and "/" in program and \
            os.path.realpath(entry.base / ours) == os.path.realpath(entry.base / program):
        program = ours
    return shlex.join(entry.argv), shlex.join((program, *old.argv[1:]))
