"""`tickq legacy check`: the registry against the old files it replaced, in one verdict. Every
kind and step with a `legacy` line must run what that job of the old files ran (the same argv,
cwd and environment, no shorter timeout); every moved line must name a kind that runs it; no
job may run in both places.

The old files are read by their readers (tickq.legacy.readers); the registry by the runner's own
loader (tickq.registry.load_registry), so the check judges what tick would run; it needs no
database."""

from __future__ import annotations

import os
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from tickq.host.programs import resolve
from tickq.legacy.oldjob import OldCommand, OldJob, Refusal
from tickq.legacy.shell import registry_program
from tickq.registry import Kind, RegistryError, Step, load_registry
from tickq.registry.durations import format_duration


class InvalidInput(Exception):
    """The registry or an old file cannot be read (exit 2)."""


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
    return (f"{label(target)}: {what} differs from its legacy line at character {at + 1}\n"
            f"  tickq:  {ours}\n"
            f"  legacy: {theirs}\n"
            f"          {' ' * at}^")


def label(target: str) -> str:
    kind, _, step = target.partition("/")
    return f'kind "{kind}", step "{step}"' if step else f'kind "{kind}"'


Found = Sequence[OldJob | Refusal]


def check(files: Sequence[tuple[str, Found]], entries: Mapping[str, Entry]) -> tuple[list[str],
                                                                                   list[str]]:
    """(failures, notes): every way the registry and the old files (each its name and what its
    reader found) disagree."""
    failures: list[str] = []
    by_legacy: dict[str, OldJob | Refusal] = {}
    for _, found in files:
        for item in found:
            if item.legacy is not None and not (isinstance(item, OldJob) and item.dormant
                                                and item.moved_to is None):
                by_legacy.setdefault(item.legacy, item)
    for entry in entries.values():
        old = by_legacy.get(entry.legacy) if entry.legacy is not None else None
        if old is not None and (not entry.is_chain or isinstance(old, OldJob)):
            failures += _parity(entry, old, entries)
    seen: set[str] = set()
    for name, found in files:
        failures += _lines(name, found, entries, seen)
        failures += _step_order(name, found, entries)
    names = ", ".join(name for name, _ in files)
    notes = [f"{label(e.target)}: its legacy line is not in {names}" for e in entries.values()
             if e.legacy is not None and e.target not in seen and e.legacy not in by_legacy]
    return failures, notes


def _lines(name: str, found: Found, entries: Mapping[str, Entry], seen: set[str]) -> list[str]:
    """What one file's moved and active jobs say against the registry."""
    failures = []
    for item in found:
        where = f"{name}:{item.where}" if item.where else name
        if item.moved_to is not None:
            seen.add(item.moved_to)
            failures += _moved(where, item, entries)
        elif isinstance(item, OldJob) and not item.dormant:
            failures += _active(where, item, entries, seen)
    return failures


def _moved(where: str, item: OldJob | Refusal, entries: Mapping[str, Entry]) -> list[str]:
    target = item.moved_to or ""
    entry = entries.get(target)
    kind = entries.get(target.partition("/")[0])
    if entry is None:
        return [f"{where}: moved to {label(target)}, which is not in the registry: nothing runs "
                "this line now"]
    failures = []
    if kind is not None and not kind.enabled and not kind.irreversible:
        failures.append(f"{where}: moved to {label(target)}, which is disabled: nothing runs "
                        "this line now")
    if entry.legacy is None:
        failures += _parity(entry, item, entries, where)
    elif entry.legacy != item.legacy:
        theirs = item.legacy or ""
        at = first_difference(theirs, entry.legacy)
        failures.append(f"{where}: the moved line differs from the legacy line of "
                        f"{label(target)} at character {at + 1}\n"
                        f"  old file: {theirs}\n  legacy:   {entry.legacy}\n"
                        f"            {' ' * at}^")
    return failures


def _active(where: str, job: OldJob, entries: Mapping[str, Entry], seen: set[str]) -> list[str]:
    """An old job still run by its old system, against the kinds that run it too."""
    failures = []
    for entry in entries.values():
        same_argv = len(job.steps) == 1 and entry.argv and entry.argv == job.steps[0].argv
        if entry.legacy != job.legacy and not same_argv:
            continue
        seen.add(entry.target)
        if job.lines is None:
            continue  # a unit or an agent: whether it is still enabled is not in its file
        if entry.irreversible:
            failures.append(f"{where}: the old line of irreversible {label(entry.target)} is "
                            "active: comment it (it must only run by hand, once, through tickq)")
        elif entry.enabled:
            failures.append(f"{where}: still active while {label(entry.target)} is enabled: "
                            f"both would run it; comment the line as #tickq:{entry.target}# or "
                            "disable the kind")
    return failures


def _step_order(name: str, found: Found, entries: Mapping[str, Entry]) -> list[str]:
    """A chain's steps must keep the order of their old lines: the old script ran them so, and
    a step may need what the one before it made."""
    where = {i.moved_to: i.lines[0] for i in found if i.moved_to and i.lines}
    failures = []
    for chain in (e for e in entries.values() if e.is_chain):
        steps = [t for t in entries if t.startswith(chain.target + "/") and t in where]
        in_file = sorted(steps, key=where.__getitem__)
        if steps != in_file:
            failures.append(
                f"{label(chain.target)}: its steps run in another order than their old lines "
                f"in {name}: registry {', '.join(s.partition('/')[2] for s in steps)}; "
                f"old file {', '.join(s.partition('/')[2] for s in in_file)}"
            )
    return failures


def _parity(entry: Entry, old: OldJob | Refusal, entries: Mapping[str, Entry],
            where: str | None = None) -> list[str]:
    """The entry against one old job: the same argv, cwd and env, no shorter timeout."""
    if isinstance(old, Refusal):
        source = f"its old line at {where}" if where else "its legacy line"
        return [f"{label(entry.target)}: {source} cannot run in tickq as it is: {old.reason}"]
    if entry.is_chain:
        steps = [e for t, e in entries.items() if t.startswith(entry.target + "/")]
        if len(steps) != len(old.steps):
            return [f"{label(entry.target)}: {len(steps)} step(s) where the old job ran "
                    f"{len(old.steps)} command(s)"]
        return [f for e, s in zip(steps, old.steps, strict=True) for f in _same(e, s, None)]
    return _same(entry, old.steps[0], old.timeout)


def _same(entry: Entry, old: OldCommand, old_timeout: int | None) -> list[str]:
    name = label(entry.target)
    failures = []
    # By the rule tick and `check` start it by (tickq.host.programs): parity with a line is
    # worth nothing if the command cannot start.
    problem = resolve(entry.argv, entry.base, entry.cwd, entry.env).problem
    if problem:
        failures.append(f"{name}: command cannot start: {problem}")
    ours, theirs = _commands(entry, old)
    if ours != theirs:
        failures.append(_mismatch(entry.target, "the command", ours, theirs))
    if old_timeout is not None and (entry.timeout is None or entry.timeout < old_timeout):
        have = format_duration(entry.timeout) if entry.timeout else "none"
        failures.append(f"{name}: timeout {have} is shorter than the old line's "
                        f"{format_duration(old_timeout)}: a run the old watchdog let finish "
                        "would be killed")
    if entry.cwd != (entry.base / (old.cwd or ".")).resolve():
        shown = os.path.relpath(entry.cwd, entry.base) if entry.cwd != entry.base else None
        theirs = (f"the old line's cd {old.cwd or '(none)'}" if not old.cwd
                  or not os.path.isabs(old.cwd) else f"the folder it ran in, {old.cwd}")
        failures.append(f"{name}: cwd {shown or '(the registry folder)'} differs from {theirs}")
    if dict(entry.env) != dict(old.env):
        # Names only: env values may be secrets, and this output lands in CI logs.
        names = sorted(k for k in {*entry.env, *old.env} if entry.env.get(k) != old.env.get(k))
        failures.append(f"{name}: env differs from the old line's in {', '.join(names)}")
    return failures


def _commands(entry: Entry, old: OldCommand) -> tuple[str, str]:
    """(the entry's command, the old job's) joined, the old program named as the registry
    names the file the shell ran (after its `cd`); a program written another way that is the
    same file (`./bin/x`, an absolute path, a path through a symlink) counts as the same."""
    program = registry_program(old.argv[0], old.cwd, entry.base)
    ours = entry.argv[0] if entry.argv else ""
    if "/" in ours and "/" in program and \
            os.path.realpath(entry.base / ours) == os.path.realpath(entry.base / program):
        program = ours
    return shlex.join(entry.argv), shlex.join((program, *old.argv[1:]))
