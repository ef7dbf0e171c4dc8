"""`tickq legacy import`: the registry kinds that replace an old file's lines, and the old file
with the moved lines behind their markers (see tickq.legacy.shell for how a line is read)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from tickq.legacy.shell import (
    OldLine,
    Translation,
    Untranslatable,
    mark,
    read_old_file,
    registry_program,
    translate,
)
from tickq.registry.durations import format_duration

_INTERPRETERS = frozenset((
    "python", "python3", "bash", "sh", "zsh", "node", "ruby", "perl", "php", "uv", "uvx", "npx",
    "deno", "bun", "java",
))  # fmt: skip


# ---------------------------------------------------------------- names and TOML


# Prefixes of kinds the registry may not name (the built-in kinds, user-built agents).
_RESERVED = ("tickq.", "agent.")


def _fitted(text: str) -> str:
    """`text` made into a kind name: lower case, a-z 0-9 _ . - only, starting with a letter or
    digit, at most 90 characters (room for a "_2" suffix). The database checks the rule itself;
    this only produces names it takes."""
    name = re.sub(r"[^a-z0-9_.-]+", "_", text.lower())
    return re.sub(r"_+", "_", name).lstrip("_.-")[:90].rstrip("_") or "job"


def kind_name(argv: Sequence[str], taken: Iterable[str] = ()) -> str:
    """A kind name from the command: the program's name and up to two subcommand words after
    it, made to fit the kind-name pattern and not in `taken`."""
    words = list(argv)
    while len(words) > 1 and Path(words[0]).name in _INTERPRETERS:
        words.pop(0)
        while len(words) > 1 and words[0].startswith("-"):
            words.pop(0)
    program = re.sub(r"\.(sh|py|rb|js|pl|bash)$", "", Path(words[0]).name)
    # The subcommand words name the job; options and their values do not, unless there are
    # no subcommand words at all (`bin/ingest --weekly`).
    parts = [program]
    for word in words[1:3]:
        if not re.fullmatch(r"[A-Za-z][A-Za-z0-9_-]*", word):
            break
        parts.append(word)
    if len(parts) == 1 and len(words) > 1 and re.fullmatch(r"--?[A-Za-z][A-Za-z0-9_-]*",
                                                           words[1]):
        parts.append(words[1].lstrip("-"))
    name = _fitted("_".join(parts))
    if name.startswith(_RESERVED):
        name = "job_" + name.replace(".", "_")
    taken = set(taken)
    candidate, n = name, 2
    while candidate in taken:
        candidate, n = f"{name}_{n}", n + 1
    return candidate


def toml_string(text: str) -> str:
    """`text` as a TOML basic string."""
    out = ['"']
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def _toml_key(key: str) -> str:
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else toml_string(key)


def _toml_array(values: Sequence[str]) -> str:
    return "[" + ", ".join(toml_string(v) for v in values) + "]"


def _command_lines(t: Translation, timeout: int, *, legacy: str, base: Path | None) -> list[str]:
    argv = (registry_program(t.argv[0], t.cwd, base), *t.argv[1:])
    lines = [f"command = {_toml_array(argv)}", f'timeout = "{format_duration(timeout)}"']
    if t.cwd is not None:
        lines.append(f"cwd = {toml_string(t.cwd)}")
    if t.env:
        pairs = ", ".join(f"{_toml_key(k)} = {toml_string(v)}" for k, v in t.env.items())
        lines.append(f"env = {{ {pairs} }}")
    lines.append(f"legacy = {toml_string(legacy)}")
    return lines


def _schedule_lines(t: Translation | None, every: int) -> list[str]:
    if t is not None and t.cron:
        return [f"cron = {toml_string(t.cron)}"]
    if t is not None and t.at:
        lines = [f"at = {_toml_array(t.at)}"]
        if t.on:
            lines.append(f"on = {_toml_array(t.on)}")
        return lines
    cadence = t.every if t is not None and t.every is not None else every
    return [f'every = "{format_duration(cadence)}"']


# ---------------------------------------------------------------- import


@dataclass(frozen=True)
class Chain:
    name: str
    first: int  # physical line numbers, inclusive
    last: int


@dataclass
class Moved:
    """One kind the import makes: `lines` are the old lines it takes, with the marker target
    of each."""

    name: str
    toml: str
    lines: list[tuple[OldLine, str]]


@dataclass
class ImportPlan:
    kinds: list[Moved]
    skipped: list[tuple[OldLine, str]]  # lines left untouched, with the reason

    def registry_text(self) -> str:
        return "\n".join(k.toml for k in self.kinds)


class ImportRefused(Exception):
    """The import as asked cannot be done (a bad --chain range, an untranslatable chain step);
    nothing is written."""


def plan_import(
    text: str, *, taken: Iterable[str] = (), chains: Sequence[Chain] = (),
    irreversible: Sequence[int] = (), every: int = 3600, default_timeout: int | None = None,
    base: Path | None = None,
) -> ImportPlan:
    """The kinds that would replace the old file's active lines (and the commented lines named in
    `irreversible`, which become irreversible kinds), in file order. `base` is the registry's
    folder, against which a program the old line ran after its `cd` is named."""
    lines = read_old_file(text)
    taken = set(taken)
    by_first = {line.first: line for line in lines}
    for n in irreversible:
        line = by_first.get(n)
        if line is None or line.moved_to is not None:
            raise ImportRefused(f"--irreversible {n}: no old line starts there, or it was moved")
    chain_of: dict[int, Chain] = {}
    for chain in chains:
        if _fitted(chain.name) != chain.name or chain.name.startswith(_RESERVED) \
                or chain.name in taken:
            raise ImportRefused(f'--chain {chain.name}: not a kind name, or the registry (or '
                               "another --chain) already has it")
        taken.add(chain.name)
        members = [ln for ln in lines if chain.first <= ln.first <= chain.last and ln.active]
        if not members:
            raise ImportRefused(f"--chain {chain.name} {chain.first} {chain.last}: no active "
                               "command in those lines")
        for line in members:
            if line.first in chain_of:
                raise ImportRefused(f"--chain {chain.name}: line {line.first} is already in "
                                   f"--chain {chain_of[line.first].name}")
            chain_of[line.first] = chain
    kinds: list[Moved] = []
    skipped: list[tuple[OldLine, str]] = []
    done_chains: set[str] = set()
    for line in lines:
        if line.moved_to is not None:
            continue
        if line.first in chain_of:
            chain = chain_of[line.first]
            if chain.name not in done_chains:
                done_chains.add(chain.name)
                members = [ln for ln in lines if chain_of.get(ln.first) is chain]
                kinds.append(_plan_chain(chain.name, members, every, default_timeout,
                                         base))
            continue
        if line.is_comment and line.first not in irreversible:
            continue
        try:
            t = translate(line.text)
        except Untranslatable as e:
            if line.first in irreversible:
                raise ImportRefused(f"--irreversible {line.first}: {e}") from None
            skipped.append((line, str(e)))
            continue
        name = kind_name(t.argv, taken)
        taken.add(name)
        fallback = _default_timeout(t, every, default_timeout)
        body = [f"[kinds.{name}]"]
        body += _schedule_lines(t, every)
        body += _command_lines(t, t.timeout or fallback, legacy=line.text, base=base)
        if line.first in irreversible:
            body.append("irreversible = true   # never scheduled until a person runs it once")
        body += _notes(t, fallback)
        kinds.append(Moved(name, "\n".join(body) + "\n", [(line, name)]))
    return ImportPlan(kinds, skipped)


def _default_timeout(t: Translation, every: int, told: int | None) -> int:
    """The timeout of a line without a `timeout` wrapper: --timeout if given, else the cadence
    (a crontab line's own, else --every; a calendar time has none, so --every)."""
    return told or (t.every if t.every is not None and not t.at else every)


def _plan_chain(name: str, members: list[OldLine], every: int, told: int | None,
                base: Path | None) -> Moved:
    steps, moved, total = [], [], 0
    step_names: set[str] = set()
    translations = []
    for line in members:
        try:
            translations.append(translate(line.text))
        except Untranslatable as e:
            raise ImportRefused(
                f"--chain {name}: line {line.first} cannot be a step: {e}"
            ) from None
    # Crontab lines carry their own schedules; a chain has one, so they must agree.
    schedules = {(t.every, t.at, t.on, t.cron) for t in translations}
    if len(schedules) > 1:
        raise ImportRefused(f"--chain {name}: its lines have different schedules; a chain runs "
                           "all its steps on one")
    timeout_default = _default_timeout(translations[0], every, told)
    for line, t in zip(members, translations, strict=True):
        step = kind_name(t.argv, step_names)
        step_names.add(step)
        timeout = t.timeout or timeout_default
        total += timeout
        body = [f"[[kinds.{name}.steps]]", f"name = {toml_string(step)}"]
        body += _command_lines(t, timeout, legacy=line.text, base=base)
        if t.ignores_failure:
            body.append("continue_on_failure = true   # the old line ended in || true")
        body += [n for n in _notes(t, timeout_default) if "|| true" not in n]
        steps.append("\n".join(body) + "\n")
        moved.append((line, f"{name}/{step}"))
    head = [f"[kinds.{name}]", *_schedule_lines(translations[0], every),
            f'timeout = "{format_duration(total)}"   # the sum of its steps\' timeouts',
            "# resume = true   # a retry resumes at the failed step: only if every step is safe "
            "to run again"]
    return Moved(name, "\n".join(head) + "\n\n" + "\n".join(steps), moved)


def _notes(t: Translation, timeout_default: int) -> list[str]:
    notes = [f"# note: {n}" for n in t.notes]
    if t.timeout is None:
        notes.append(f"# note: no timeout in the old line; {format_duration(timeout_default)} "
                     "here")
    return notes


def apply_import(plan: ImportPlan, old_text: str) -> str:
    """The old file with every moved line behind its marker; nothing else changes."""
    physical = old_text.split("\n")
    for kind in plan.kinds:
        for line, target in kind.lines:
            for index in range(line.first - 1, line.last):
                physical[index] = mark(physical[index], target)
    return "\n".join(physical)


# What tickq would refuse in a registry text: each problem's message (none: it takes it all).
Judge = Callable[[str], list[str]]


def joined(registry_text: str, addition: str) -> str:
    """The registry with `addition` appended after a blank line."""
    if not registry_text:
        return addition
    return registry_text + ("" if registry_text.endswith("\n") else "\n") + "\n" + addition


def vetted(plan: ImportPlan, registry_text: str, judge: Judge) -> ImportPlan:
    """`plan` without the kinds tickq would refuse (a NUL in a word, a timeout past the
    registry's bound): each one's lines are left as they are, with tickq's reason. Raises
    ImportRefused when the registry is refused already, for a refused chain, or when the kinds
    kept are refused together."""
    already = judge(registry_text)
    if already:
        raise ImportRefused(f"the registry is refused as it is, before any import: {already[0]}")
    kept: list[Moved] = []
    skipped = list(plan.skipped)
    for kind in plan.kinds:
        problems = judge(joined(registry_text, kind.toml))
        if not problems:
            kept.append(kind)
        elif len(kind.lines) > 1:
            raise ImportRefused(f"--chain {kind.name}: tickq would refuse it: {problems[0]}")
        else:
            skipped.append((kind.lines[0][0], f"tickq would refuse it: {problems[0]}"))
    together = judge(joined(registry_text, "\n".join(k.toml for k in kept))) if kept else []
    if together:
        raise ImportRefused(f"the kinds together would make a registry tickq refuses: "
                            f"{together[0]}")
    skipped.sort(key=lambda item: item[0].first)
    return ImportPlan(kept, skipped)
