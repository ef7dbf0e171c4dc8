"""Which reader reads an old file: a small table, looked at in order, of a recogniser (the file's
name and text to yes or no) and a reader (`read(path, text) -> list[OldJob | Refusal]`) per
kind of file. A file no recogniser takes is refused in one line; a reader never raises for what
a file says, and a reader's own failure is one line too (saying it is tickq's bug), never a
traceback.

A reader for a kind of file joins with a row (`not_read_yet` refuses a kind by name until its
reader is there). A systemd unit or a launchd plist is recognised before any crontab, so one is
never read as a crontab."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tickq.legacy import crontab, launchd, script, systemd
from tickq.legacy.oldjob import OldJob, Refusal

Found = list[OldJob | Refusal]
Read = Callable[[Path, str], Found]
Recognise = Callable[[Path, str], bool]
_SECTION = re.compile(r"^\s*\[(Unit|Timer|Service|Install|Socket|Path)\]\s*$", re.MULTILINE)


@dataclass(frozen=True)
class Kind:
    what: str  # "a systemd timer", for messages
    recognise: Recognise
    read: Read


def _sections(text: str) -> set[str]:
    return {m.group(1) for m in _SECTION.finditer(text)}


def is_systemd_timer(path: Path, text: str) -> bool:
    return path.suffix == ".timer" or "Timer" in _sections(text)


def is_systemd_unit(path: Path, text: str) -> bool:
    return path.suffix in (".service", ".socket", ".path") or bool(_sections(text))


def is_launchd_plist(path: Path, text: str) -> bool:
    head = text.lstrip()[:1024]
    return path.suffix == ".plist" or head.startswith("bplist") or (
        head.startswith("<?xml") and "<plist" in head) or head.startswith("<plist")


def not_read_yet(what: str, how: str) -> Read:
    """A reader that refuses every file of its kind in one line (for a kind whose reader is
    not there yet)."""

    def refuse(path: Path, text: str) -> Found:
        return [Refusal(path, "", f"{what}: {how}")]

    return refuse


def _script(path: Path, text: str) -> Found:
    return script.read(path, text)


KINDS: tuple[Kind, ...] = (
    Kind("a systemd timer", is_systemd_timer, systemd.read),
    Kind("a systemd unit", is_systemd_unit, systemd.read_alone),
    Kind("a launchd plist", is_launchd_plist, launchd.read),
    Kind("a system crontab", crontab.is_system, crontab.read_system),
    Kind("a crontab", crontab.is_crontab, crontab.read_user),
    Kind("a shell script", script.is_script, _script),
)


def kind_of(path: Path, text: str) -> Kind | None:
    for kind in KINDS:
        if kind.recognise(path, text):
            return kind
    return None


def read(path: Path, text: str) -> Found:
    """The jobs of one old file (its text already read), each refusal one line; a refusal with
    an empty `where` is the whole file's."""
    try:
        kind = kind_of(path, text)
        if kind is None:
            return [Refusal(path, "", f"{_not_a_file_tickq_reads(text)}: not a crontab, a shell "
                                      "script of commands, a systemd unit or a launchd plist")]
        return kind.read(path, text)
    except Exception as exc:  # noqa: BLE001 - a reader's bug is one line, never a traceback
        return [Refusal(path, "", f"tickq could not read it (a bug in tickq, please report "
                                  f"it): {type(exc).__name__}: {str(exc)[:200]}")]


def _not_a_file_tickq_reads(text: str) -> str:
    problem = script.shape_problem(text)
    if problem is None:
        return "nothing tickq reads"
    where, _, why = problem.partition(": ")
    return f"line {where}: {why}"
