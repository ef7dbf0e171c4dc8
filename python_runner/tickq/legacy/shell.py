"""Reading an old orchestrator the way the shell would: its logical lines, and what each runs.

An old orchestrator is a shell script of one command per line, run in order by a timer (a
crontab is read by crontab.py, as cron reads it). Each line is read the way the shell would
read it, but only as far as tickq can reproduce it without a shell: the
usual wrappers (`cd DIR &&`, `VAR=x`, `env VAR=x`, `timeout [-s SIG] DUR`, a trailing
`|| true`) become the kind's cwd, env, timeout and a note; anything else the shell would do for
the line (pipes, redirections, `;`, subshells, globs, `$X`, backticks, here-docs...) makes the
line untranslatable, and it is reported with its line number and left alone.

A moved line stays in the old file behind a marker naming its kind, `#tickq:KIND# <old line>`
(or `#tickq:KIND/STEP# ` for a step of a chain), so deleting the marker is the rollback.
words.py scans a line's shell words; script.py turns the lines into jobs (oldjob.py), which
importing.py turns into kinds and parity.py holds the kinds to.
"""

from __future__ import annotations

import math
import os
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from tickq.legacy.words import Scan, Untranslatable, raw_words, scan, split_words

MARKER = re.compile(r"#tickq:([a-z0-9][a-z0-9_.-]{0,99}(?:/[a-z0-9][a-z0-9_.-]{0,99})?)# ")
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
_TIMEOUT_DURATION = re.compile(r"(\d+(?:\.\d+)?|\.\d+)([smhd]?)")
_UNIT_SECONDS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}
LINE_MAX = 16384  # characters of one logical line read as a command; a longer one is refused
CONTINUED_MAX = 100  # physical lines one logical line may span
# Builtins that change the script's own state: as a kind they would do nothing, or not the same.
SHELL_BUILTINS = frozenset((
    "set", "cd", "export", "source", ".", "exit", "trap", "shopt", "umask", "ulimit", "alias",
    "unset", "declare", "local", "readonly", "typeset", "wait", "exec", "eval", "return", "shift",
    "if", "then", "else", "elif", "fi", "for", "while", "until", "do", "done", "case", "esac",
    "function", "{", "}", "[[", "]]", "break", "continue", "pushd", "popd", "builtin", "command",
    "let",
))  # fmt: skip


# ---------------------------------------------------------------- reading the old file


@dataclass(frozen=True)
class OldLine:
    """One logical line of the old file: a command (possibly continued over several physical
    lines), a comment or a blank. `text` is verbatim without the marker; `moved_to` is the
    marker's "KIND" or "KIND/STEP" when the line was moved."""

    first: int  # 1-based physical line numbers
    last: int
    text: str
    moved_to: str | None = None

    @property
    def is_comment(self) -> bool:
        """A plain comment (this includes a lane kept commented by hand) or a blank line."""
        stripped = self.text.strip()
        return not stripped or stripped.startswith("#")

    @property
    def active(self) -> bool:
        """The old orchestrator would run this line."""
        return self.moved_to is None and not self.is_comment


def read_old_file(text: str) -> list[OldLine]:
    """Split `text` into logical lines, following backslash continuations and quotes left open
    at the end of a line, and taking the markers off moved lines."""
    physical = text.split("\n")
    if physical and physical[-1] == "":
        physical.pop()
    lines: list[OldLine] = []
    i = 0
    while i < len(physical):
        marker, body = unmark(physical[i])
        parts = [body]
        j = i
        size = len(body)
        # A line past the bound is not scanned (the scanner walks a character at a time) and
        # continues nothing: translate refuses it by its length alone.
        if size <= LINE_MAX and body.strip() and not body.lstrip().startswith("#"):
            while (j - i < CONTINUED_MAX and j + 1 < len(physical)
                   and scan("\n".join(parts)).incomplete):
                next_marker, next_body = unmark(physical[j + 1])
                if next_marker != marker:
                    break
                size += len(next_body) + 1
                if size > LINE_MAX:
                    break
                j += 1
                parts.append(next_body)
        lines.append(OldLine(i + 1, j + 1, "\n".join(parts), marker))
        i = j + 1
    return lines


def unmark(line: str) -> tuple[str | None, str]:
    match = MARKER.match(line)
    return (match.group(1), line[match.end():]) if match else (None, line)


def mark(line: str, target: str) -> str:
    """The physical `line` commented as moved to `target` ("KIND" or "KIND/STEP")."""
    return f"#tickq:{target}# {line}"


# ---------------------------------------------------------------- reading one line


@dataclass(frozen=True)
class Translation:
    """What an old line runs, as tickq would run it."""

    argv: tuple[str, ...]  # the command after its wrappers, as the shell would split it
    timeout: int | None = None  # the wrapper's, in seconds
    cwd: str | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    ignores_failure: bool = False  # `|| true`
    commented: bool = False  # the line is kept commented in the old file (a lane run by hand)
    notes: tuple[str, ...] = ()

    @property
    def joined(self) -> str:
        """The argv as the shell would read it back."""
        return shlex.join(self.argv)


def registry_program(program: str, cwd: str | None, base: Path | None = None) -> str:
    """The program an old line ran, named as a registry in `base` names it. A program with a
    "/" is relative to the registry's folder whatever the kind's cwd says (tickq.host.programs),
    while the shell read it from the folder of the line's `cd`: `cd ingest && ../bin/ingest`
    ran bin/ingest. The kernel reads ".." physically, so with `base` given a `cd` through a
    symlink names the file it reaches. A bare name (PATH) or an absolute path is the same."""
    if cwd is None or "/" not in program or os.path.isabs(program):
        return program
    named = os.path.normpath(os.path.join(cwd, program))
    if base is None:
        return named
    ran = os.path.realpath(base / cwd / program)
    if os.path.realpath(base / named) == ran:
        return named
    return ran if os.path.isabs(named) else os.path.relpath(ran, os.path.realpath(base))


def translate(text: str) -> Translation:
    """Read one line of an old orchestrator script (possibly kept commented); raise
    Untranslatable with the reason when tickq cannot run it the same way."""
    if len(text) > LINE_MAX:
        raise Untranslatable(f"longer than {LINE_MAX} characters ({len(text)})")
    text, commented = _uncommented(text)
    notes: list[str] = []
    found = scan(text)
    if found.incomplete:
        raise Untranslatable("the line ends inside quotes or on a backslash")
    if found.problems:
        raise Untranslatable("; ".join(found.problems))
    cwd, ignores_failure, command_text = _command_list(found, notes)
    words = split_words(command_text)
    if not words:
        raise Untranslatable("no command")
    env, timeout = _wrappers(command_text, words, notes)
    _refuse_unrunnable(words, cwd)
    return Translation(
        argv=tuple(words),
        timeout=timeout, cwd=cwd, env=env, ignores_failure=ignores_failure,
        commented=commented, notes=tuple(notes),
    )


def _uncommented(text: str) -> tuple[str, bool]:
    """The line without the `#` that keeps it commented, and whether it had one."""
    stripped = text.strip()
    if stripped.startswith("#!"):
        raise Untranslatable("a shebang line")
    if not stripped.startswith("#"):
        return text, False
    text = stripped.lstrip("#").lstrip()
    if not text:
        raise Untranslatable("an empty comment")
    return text, True


def _command_list(found: Scan, notes: list[str]) -> tuple[str | None, bool, str]:
    """(the leading `cd DIR &&`'s DIR, whether a trailing `|| true` ignores failures, the one
    command between them); any other command list is untranslatable."""
    segments, operators = list(found.segments), list(found.operators)
    cwd = None
    ignores_failure = False
    if operators and operators[0] == "&&":
        words = split_words(segments[0])
        if len(words) == 2 and words[0] == "cd":
            cwd = words[1]
            segments.pop(0)
            operators.pop(0)
    if operators and operators[-1] == "||" and split_words(segments[-1]) in (["true"], [":"]):
        ignores_failure = True
        segments.pop()
        operators.pop()
        notes.append("the old line ignored failures (|| true); tickq records them")
    if operators:
        what = ("&& after anything but a leading `cd DIR &&`" if "&&" in operators
                else "|| other than a trailing `|| true`")
        raise Untranslatable(f"a command list ({what})")
    return cwd, ignores_failure, segments[0].strip()


def _wrappers(command_text: str, words: list[str], notes: list[str]
              ) -> tuple[dict[str, str], int | None]:
    """Take the wrappers (`VAR=x`, `env VAR=x`, `timeout [-s SIG] DUR`) off the front of
    `words`; the variables they set and the timeout's seconds."""
    env: dict[str, str] = {}
    timeout = None
    raw = raw_words(command_text)
    if len(raw) != len(words):  # not expected; then read assignments from the split words
        raw = list(words)
    # Who reads the next word: the shell takes `NAME=x` as an assignment only when the name and
    # the `=` are unquoted; `env` takes any word with a `=`; after `timeout DUR` comes the
    # command (or `env`), never an assignment.
    reader = "shell"
    while words:
        is_assignment = _ASSIGNMENT.match(raw[0] if reader == "shell" else words[0])
        if reader in ("shell", "env") and is_assignment:
            name, _, value = words.pop(0).partition("=")
            raw.pop(0)
            env[name] = value
        elif words[0] == "env" and len(words) > 1 and _ASSIGNMENT.match(words[1]):
            words.pop(0)
            raw.pop(0)
            reader = "env"
        elif words[0] == "timeout" and timeout is None:
            before = len(words)
            timeout, timeout_notes = _timeout_wrapper(words)
            del raw[:before - len(words)]
            notes += timeout_notes
            reader = "timeout"
        else:
            break
    return env, timeout


def _refuse_unrunnable(words: list[str], cwd: str | None) -> None:
    """Raise when what is left after the wrappers is no command tickq can start alike."""
    if not words:
        raise Untranslatable("sets variables for the lines below but runs nothing; give the "
                             "kinds an env table instead")
    if "" in words:
        raise Untranslatable("an empty argument (''): a registry command has no empty strings")
    if words[0] in SHELL_BUILTINS:
        raise Untranslatable(f'"{words[0]}" is a shell builtin: it changes the shell, not a '
                             "job tickq can run")
    if cwd is not None and any(ch in cwd for ch in "~$"):
        raise Untranslatable("the cd directory needs the shell to expand it")


def _timeout_wrapper(words: list[str]) -> tuple[int | None, list[str]]:
    """Consume `timeout [options] DURATION` from `words`; the seconds (None for `timeout 0`)."""
    notes: list[str] = []
    words.pop(0)
    while words and words[0].startswith("-") and words[0] != "-":
        option = words.pop(0)
        if option in ("-s", "--signal", "-k", "--kill-after"):
            if not words:
                raise Untranslatable(f"timeout {option} needs a value")
            value = words.pop(0)
            notes.append(_timeout_option_note(option, value))
        elif option.startswith(("--signal=", "--kill-after=")):
            name, _, value = option.partition("=")
            notes.append(_timeout_option_note(name, value))
        elif option.startswith("-s") or option.startswith("-k"):
            notes.append(_timeout_option_note(option[:2], option[2:]))
        elif option in ("--preserve-status", "--foreground", "-v", "--verbose", "-f"):
            notes.append(f"timeout {option} has no tickq equivalent")
        elif option == "--":
            break
        else:
            raise Untranslatable(f"unknown timeout option {option}")
    if not words:
        raise Untranslatable("timeout without a duration")
    match = _TIMEOUT_DURATION.fullmatch(words[0])
    if match is None:
        raise Untranslatable(f'timeout duration "{words[0]}" is not a number with an optional '
                             "unit s, m, h or d")
    words.pop(0)
    seconds = float(match.group(1)) * _UNIT_SECONDS[match.group(2)]
    if seconds == 0:
        notes.append("timeout 0 means no timeout in the old line")
        return None, notes
    if seconds != int(seconds):
        notes.append(f"timeout {seconds:g}s rounded up to whole seconds")
    return math.ceil(seconds), notes


def _timeout_option_note(option: str, value: str) -> str:
    if option in ("-s", "--signal"):
        return (f"the old watchdog sent SIG{value.upper().removeprefix('SIG')}; tickq's sends "
                "SIGTERM to the process group, then SIGKILL")
    return f"the old watchdog killed {value} after its signal; tickq's own grace applies"
