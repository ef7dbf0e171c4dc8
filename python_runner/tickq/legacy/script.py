"""An old orchestrator's shell script (one command per line, run in order by a timer) as jobs:
each logical line read the way the shell would, as far as tickq can run it without one
(tickq.legacy.shell). A job has no schedule of its own (the import gives it `--every`) and runs
from the registry's folder, a leading `cd DIR &&` being relative to it."""

from __future__ import annotations

import re
from pathlib import Path

from tickq.legacy.names import kind_name
from tickq.legacy.oldjob import OldCommand, OldJob, Refusal
from tickq.legacy.shell import LINE_MAX, OldLine, Translation, read_old_file, translate
from tickq.legacy.words import Untranslatable, raw_words

_SHELLS = frozenset(("sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "busybox"))
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")


def shape_problem(text: str) -> str | None:
    """Why `text` is no shell script, naming its first line that is not one ("LINE: why");
    None when it could be one."""
    first = text.split("\n", 1)[0]
    if first.startswith("#!"):
        words = first[2:].split()
        program = Path(words[0]).name if words else ""
        if program == "env" and len(words) > 1:
            program = Path(words[1]).name
        if program not in _SHELLS:
            return f"1: a #! line for {program or 'nothing'!r}"
    for line in read_old_file(text):
        if not line.active or len(line.text) > LINE_MAX:
            continue
        words = raw_words(line.text)
        first_word = words[0] if words else ""
        if first_word and not _ASSIGNMENT.match(first_word) and ":" in first_word \
                and not first_word.startswith(("'", '"')):
            return (f"{line.first}: a first word holding ':', which names no program a shell "
                    f"runs ({line.text.strip()[:60]!r})")
    return None


def is_script(path: Path, text: str) -> bool:
    return shape_problem(text) is None


def read(path: Path, text: str) -> list[OldJob | Refusal]:
    """A job for every active or moved line, a dormant one for every commented line that
    reads as a command (for `--irreversible`); a refusal for each active or moved line tickq
    cannot run the same way."""
    found: list[OldJob | Refusal] = []
    for line in read_old_file(text):
        where = str(line.first) if line.first == line.last else f"{line.first}-{line.last}"
        commented = line.is_comment and line.moved_to is None
        if commented and not line.text.strip().lstrip("#").strip():
            continue
        try:
            t = translate(line.text)
        except Untranslatable as e:
            if not commented:
                found.append(Refusal(path, where, str(e), (line.first, line.last),
                                     line.moved_to, line.text))
            continue
        found.append(_job(path, where, line, t))
    return found


def _job(path: Path, where: str, line: OldLine, t: Translation) -> OldJob:
    step = OldCommand(t.argv, t.cwd, dict(t.env), t.ignores_failure)
    return OldJob(path, where, line.text, {}, (step,), t.timeout, t.notes,
                  name_hint=kind_name(t.argv), lines=(line.first, line.last),
                  moved_to=line.moved_to, dormant=t.commented)
