"""`tickq legacy import`: the registry kinds that replace the jobs old files hold (as their
readers found them: tickq.legacy.readers), and each line-based file with its moved lines behind
their `#tickq:KIND# ` markers.

A job already in the registry (a kind or step with its `legacy` line) is said to be there and
not added again; `--chain` makes the jobs of a range of lines one chain kind, `--irreversible`
a commented line an irreversible kind."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from tickq.legacy.kindtoml import command_lines, comment, schedule_lines, toml_key, toml_string
from tickq.legacy.names import RESERVED, fitted, kind_name
from tickq.legacy.oldjob import OldCommand, OldJob, Refusal
from tickq.legacy.shell import mark, registry_program
from tickq.registry.durations import format_duration


@dataclass(frozen=True)
class Chain:
    name: str
    first: int  # physical line numbers, inclusive
    last: int


@dataclass
class Moved:
    """One kind the import makes, with the jobs it takes (each with its marker's target)."""

    name: str
    toml: str
    jobs: list[tuple[OldJob, str]]


@dataclass
class ImportPlan:
    kinds: list[Moved] = field(default_factory=list)
    skipped: list[Refusal] = field(default_factory=list)  # left as they are, with the reason
    already: list[tuple[OldJob, str]] = field(default_factory=list)  # in the registry: target

    def registry_text(self) -> str:
        return "\n".join(k.toml for k in self.kinds)


class ImportRefused(Exception):
    """The import as asked cannot be done (a bad --chain range, an untranslatable chain step);
    nothing is written."""


@dataclass(frozen=True)
class Options:
    taken: Iterable[str] = ()  # the registry's kind names
    legacy: Mapping[str, str] = field(default_factory=dict)  # its legacy lines: their target
    chains: Sequence[Chain] = ()
    irreversible: Sequence[int] = ()
    every: int = 3600  # the cadence of a job with no schedule of its own (a script's line)
    timeout: int | None = None  # --timeout
    base: Path | None = None  # the registry's folder
    timezone: str = "UTC"  # the registry's


def plan_import(found: Sequence[OldJob | Refusal], options: Options = Options()) -> ImportPlan:
    """The kinds that would replace the jobs in `found` (dormant ones only when named by
    --irreversible), in order: a --chain's kind where its first job was."""
    jobs = [f for f in found if isinstance(f, OldJob) and f.moved_to is None]
    plan = ImportPlan(skipped=[f for f in found if isinstance(f, Refusal) and f.moved_to is None
                               and _first(f) not in options.irreversible])
    taken = set(options.taken)
    chain_of = _chains(jobs, found, options, taken)
    _check_irreversible(jobs, found, options)
    seen = dict(options.legacy)  # legacy line: the kind (or chain step) that runs it
    for job in jobs:
        chain = chain_of.get(_first(job))
        irreversible = _first(job) in options.irreversible
        if chain is not None:
            if chain.name not in (k.name for k in plan.kinds):
                members = [j for j in jobs if chain_of.get(_first(j)) is chain]
                plan.kinds.append(_plan_chain(chain.name, members, options))
        elif job.dormant and not irreversible:
            continue
        elif job.legacy in seen:
            plan.already.append((job, seen[job.legacy]))
        else:
            name = kind_name([job.name_hint] if job.name_hint else job.steps[0].argv, taken)
            taken.add(name)
            seen[job.legacy] = name
            plan.kinds.append(Moved(name, _kind_toml(name, job, options, irreversible),
                                    [(job, name)]))
    return plan


def _first(found: OldJob | Refusal) -> int | None:
    """The first physical line of what was found (None: not from a line, e.g. a plist)."""
    return found.lines[0] if found.lines else None


def _chains(jobs: list[OldJob], found: Sequence[OldJob | Refusal], options: Options,
            taken: set[str]) -> dict[int, Chain]:
    chain_of: dict[int, Chain] = {}
    for chain in options.chains:
        if fitted(chain.name) != chain.name or chain.name.startswith(RESERVED) \
                or chain.name in taken:
            raise ImportRefused(f'--chain {chain.name}: not a kind name, or the registry (or '
                                "another --chain) already has it")
        taken.add(chain.name)
        for item in found:
            inside = item.lines and chain.first <= item.lines[0] <= chain.last
            if inside and isinstance(item, Refusal) and item.moved_to is None:
                raise ImportRefused(f"--chain {chain.name}: line {item.lines[0]} cannot be a "
                                    f"step: {item.reason}")
        members = [j for j in jobs if j.lines and chain.first <= j.lines[0] <= chain.last
                   and j.moved_to is None and not j.dormant]
        if not members:
            raise ImportRefused(f"--chain {chain.name} {chain.first} {chain.last}: no active "
                                "command in those lines")
        for job in members:
            if job.lines[0] in chain_of:
                raise ImportRefused(f"--chain {chain.name}: line {job.lines[0]} is already in "
                                    f"--chain {chain_of[job.lines[0]].name}")
            chain_of[job.lines[0]] = chain
    return chain_of


def _check_irreversible(jobs: list[OldJob], found: Sequence[OldJob | Refusal],
                        options: Options) -> None:
    for n in options.irreversible:
        if any(j.lines and j.lines[0] == n and j.moved_to is None for j in jobs):
            continue
        refused = [r for r in found if isinstance(r, Refusal) and r.lines and r.lines[0] == n
                   and r.moved_to is None]
        if refused:
            raise ImportRefused(f"--irreversible {n}: {refused[0].reason}")
        raise ImportRefused(f"--irreversible {n}: no old line starts there, or it was moved")


def _timeout(job: OldJob, options: Options) -> tuple[int, str | None]:
    """The timeout of a job whose old system set none, and the note saying where it comes
    from: --timeout, else the cadence (--every for a job with no schedule of its own), never
    longer than the shortest gap between two of its slots."""
    told = options.timeout or options.every
    if job.gap is None:
        return told, f"no timeout in the old line; {format_duration(told)} here"
    chosen = min(told, job.gap)
    why = ("the shortest gap between two of its slots" if chosen == job.gap
           else "--timeout" if options.timeout else "the import's default (--every)")
    if options.timeout and options.timeout > job.gap:
        why += f" (--timeout {format_duration(options.timeout)} is longer)"
    return chosen, f"the old system set no timeout; {format_duration(chosen)} here: {why}"


def _command(step: OldCommand, timeout: int, legacy: str, options: Options) -> list[str]:
    argv = (registry_program(step.argv[0], step.cwd, options.base), *step.argv[1:])
    return command_lines(argv, timeout, step.cwd, step.env, legacy)


def _kind_toml(name: str, job: OldJob, options: Options, irreversible: bool) -> str:
    if len(job.steps) > 1:
        return _steps_toml(name, job, options)
    timeout, said = (job.timeout, None) if job.timeout else _timeout(job, options)
    body = [f"[kinds.{toml_key(name)}]",
            *schedule_lines(job.schedule, options.every, options.timezone),
            *_command(job.steps[0], timeout, job.legacy, options)]
    if irreversible:
        body.append("irreversible = true   # never scheduled until a person runs it once")
    body += [f"# note: {comment(n)}" for n in (*job.notes, *([said] if said else []))]
    return "\n".join(body) + "\n"


def _steps_toml(name: str, job: OldJob, options: Options) -> str:
    """A job of several commands (a service's ExecStartPre=, ExecStart=...) as a chain: each
    step may run as long as the old system let them all run together, the chain their sum (a
    chain's timeout covers its steps')."""
    timeout, said = (job.timeout, None) if job.timeout else _timeout(job, options)
    total = timeout * len(job.steps)
    head = [f"[kinds.{toml_key(name)}]",
            *schedule_lines(job.schedule, options.every, options.timezone),
            f'timeout = "{format_duration(total)}"   # its steps\' timeouts together',
            f"legacy = {toml_string(job.legacy)}",
            *[f"# note: {comment(n)}" for n in (*job.notes, *([said] if said else []))]]
    if job.timeout and len(job.steps) > 1:
        head.append(f"# note: the old system let its {len(job.steps)} commands run "
                    f"{format_duration(timeout)} together; each step may take that here")
    steps, names = [], set()
    for step in job.steps:
        step_name = kind_name([step.name] if step.name else step.argv, names)
        names.add(step_name)
        argv = (registry_program(step.argv[0], step.cwd, options.base), *step.argv[1:])
        lines = [f"[[kinds.{toml_key(name)}.steps]]", f"name = {toml_string(step_name)}",
                 *command_lines(argv, timeout, step.cwd, step.env, "")[:-1]]
        if step.ignore_failure:
            lines.append("continue_on_failure = true")
        steps.append("\n".join(lines) + "\n")
    return "\n".join(head) + "\n\n" + "\n".join(steps)


def _plan_chain(name: str, members: list[OldJob], options: Options) -> Moved:
    # Crontab lines carry their own schedules; a chain has one, so they must agree.
    if len({tuple(sorted((k, str(v)) for k, v in j.schedule.items())) for j in members}) > 1:
        raise ImportRefused(f"--chain {name}: its lines have different schedules; a chain runs "
                            "all its steps on one")
    default, said = _timeout(members[0], options)
    steps, moved, names, total = [], [], set(), 0
    for job in members:
        step = kind_name([job.name_hint] if job.name_hint else job.steps[0].argv, names)
        names.add(step)
        timeout = job.timeout or default
        total += timeout
        body = [f"[[kinds.{toml_key(name)}.steps]]", f"name = {toml_string(step)}",
                *_command(job.steps[0], timeout, job.legacy, options)]
        if job.steps[0].ignore_failure:
            body.append("continue_on_failure = true   # the old line ended in || true")
        notes = [n for n in job.notes if "|| true" not in n]
        body += [f"# note: {comment(n)}" for n in (*notes, *([said] if not job.timeout else []))]
        steps.append("\n".join(body) + "\n")
        moved.append((job, f"{name}/{step}"))
    head = [f"[kinds.{toml_key(name)}]", *schedule_lines(members[0].schedule, options.every,
                                               options.timezone),
            f'timeout = "{format_duration(total)}"   # the sum of its steps\' timeouts',
            "# resume = true   # a retry resumes at the failed step: only if every step is safe "
            "to run again"]
    return Moved(name, "\n".join(head) + "\n\n" + "\n".join(steps), moved)


def apply_import(plan: ImportPlan, source: Path, old_text: str) -> str:
    """`source`'s text with every moved line (and every line already in the registry) behind
    its marker; nothing else changes."""
    physical = old_text.split("\n")
    targets = [*(pair for kind in plan.kinds for pair in kind.jobs), *plan.already]
    for job, target in targets:
        if job.source == source and job.lines is not None:
            for index in range(job.lines[0] - 1, job.lines[1]):
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
    registry's bound): each one's jobs are left as they are, with tickq's reason. Raises
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
        elif len(kind.jobs) > 1:
            raise ImportRefused(f"--chain {kind.name}: tickq would refuse it: {problems[0]}")
        else:
            job = kind.jobs[0][0]
            skipped.append(Refusal(job.source, job.where, f"tickq would refuse it: "
                                   f"{problems[0]}", job.lines, legacy=job.legacy))
    together = judge(joined(registry_text, "\n".join(k.toml for k in kept))) if kept else []
    if together:
        raise ImportRefused(f"the kinds together would make a registry tickq refuses: "
                            f"{together[0]}")
    return replace(plan, kinds=kept, skipped=skipped)
