"""Reading an old orchestrator the way the shell would: its logical lines, and what each runs.

An old orchestrator is a shell script of one command per line or a crontab. Each line is read
the way the shell would read it, but only as far as tickq can reproduce it without a shell: the
usual wrappers (`cd DIR &&`, `VAR=x`, `env VAR=x`, `timeout [-s SIG] DUR`, a trailing
`|| true`) become the kind's cwd, env, timeout and a note; anything else the shell would do for
the line (pipes, redirections, `;`, subshells, globs, `$X`, backticks, here-docs...) makes the
line untranslatable, and it is reported with its line number and left alone.

A moved line stays in the old file behind a marker naming its kind, `#tickq:KIND# <old line>`
(or `#tickq:KIND/STEP# ` for a step of a chain), so deleting the marker is the rollback.
`legacy_import` turns the lines into kinds, `legacy_check` holds the kinds to them.
"""

from __future__ import annotations

import math
import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

MARKER = re.compile(r"#tickq:([a-z0-9][a-z0-9_.-]{0,99}(?:/[a-z0-9][a-z0-9_.-]{0,99})?)# ")
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
_TIMEOUT_DURATION = re.compile(r"(\d+(?:\.\d+)?|\.\d+)([smhd]?)")
_CRON_FIELD = re.compile(r"[0-9*][0-9A-Za-z*,/-]*|[A-Za-z]{3}[A-Za-z0-9,/-]*")
_UNIT_SECONDS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}
# Builtins that change the script's own state: as a kind they would do nothing, or not the same.
_SHELL_BUILTINS = frozenset((
    "set", "cd", "export", "source", ".", "exit", "trap", "shopt", "umask", "ulimit", "alias",
    "unset", "declare", "local", "readonly", "typeset", "wait", "exec", "eval", "return", "shift",
    "if", "then", "else", "elif", "fi", "for", "while", "until", "do", "done", "case", "esac",
    "function", "{", "}", "[[", "]]", "break", "continue", "pushd", "popd", "builtin", "command",
    "let",
))  # fmt: skip
_WEEKDAYS = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")  # cron numbers them 0-6 (7 = sun)
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")


class Untranslatable(Exception):
    """A line tickq cannot run the same way without a shell; the message says why."""


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
        marker, body = _unmark(physical[i])
        parts = [body]
        j = i
        if body.strip() and not body.lstrip().startswith("#"):
            while _scan("\n".join(parts)).incomplete and j + 1 < len(physical):
                next_marker, next_body = _unmark(physical[j + 1])
                if next_marker != marker:
                    break
                j += 1
                parts.append(next_body)
        lines.append(OldLine(i + 1, j + 1, "\n".join(parts), marker))
        i = j + 1
    return lines


def _unmark(line: str) -> tuple[str | None, str]:
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
    every: int | None = None  # from a crontab schedule
    at: tuple[str, ...] = ()
    on: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def joined(self) -> str:
        """The argv as the shell would read it back."""
        return shlex.join(self.argv)


@dataclass
class _Scan:
    segments: list[str]  # the text between `&&` / `||`, continuations and comment removed
    operators: list[str]
    problems: list[str]
    incomplete: bool  # ends inside quotes or on a backslash: the line goes on


def _scan(text: str) -> _Scan:
    """Walk `text` the way the shell's parser would, noting every feature that needs a shell."""
    segments, operators, problems = [], [], []
    current: list[str] = []
    quote: str | None = None
    word_start = True
    in_comment = False
    i, n = 0, len(text)

    def problem(message: str) -> None:
        if message not in problems:
            problems.append(message)

    while i < n:
        c = text[i]
        nxt = text[i + 1] if i + 1 < n else ""
        if quote == "'":
            current.append(c)
            quote = None if c == "'" else quote
            i += 1
            continue
        if quote == '"':
            if c == "\\":
                if nxt == "\n":
                    i += 2
                    continue
                if nxt in ("$", "`"):
                    problem(f'a backslash before "{nxt}" inside double quotes (tickq cannot '
                            "tell it from the shell's own escaping)")
                current.append(c + nxt)
                i += 2
                continue
            if c == "$":
                problem("variable expansion or command substitution ($) inside double quotes")
            elif c == "`":
                problem("command substitution (backticks)")
            elif c == '"':
                quote = None
            current.append(c)
            i += 1
            continue
        if c == "\\":
            if nxt == "\n":  # a line continuation: the shell removes both characters
                i += 2
                continue
            current.append(c + nxt)
            word_start = False
            i += 2
            continue
        if c in "'\"":
            quote = c
            word_start = False
            current.append(c)
        elif c == "#" and word_start:
            # A comment runs to the end of its physical line; a backslash in it continues
            # nothing.
            end = text.find("\n", i)
            if end < 0:
                in_comment = True
                break
            i = end
            continue
        elif c == "\n":
            problem("a second command on the next line")
            break
        elif c in " \t":
            word_start = True
            current.append(c)
        elif c in "|&" and nxt == c:
            operators.append(c + c)
            segments.append("".join(current))
            current = []
            word_start = True
            i += 2
            continue
        else:
            reason = _shell_feature(c, nxt, word_start)
            if reason:
                problem(reason)
            current.append(c)
            word_start = False
        i += 1
    segments.append("".join(current))
    # An odd run of trailing backslashes outside quotes continues the line, as an open quote does.
    trailing = 0 if in_comment else len(text) - len(text.rstrip("\\"))
    return _Scan(segments, operators, problems, quote is not None or trailing % 2 == 1)


def _shell_feature(c: str, nxt: str, word_start: bool) -> str | None:
    if c == "|":
        return "a pipe (|)"
    if c == "&":
        return "a command run in the background (&)"
    if c == ";":
        return "several commands on one line (;)"
    if c == "<" and nxt == "<":
        return "a here-document or here-string (<<)"
    if c in "<>":
        return f"a redirection ({c})"
    if c in "()":
        return "a subshell or command group ( )"
    if c == "$":
        if nxt == "'":
            return "ANSI-C quoting ($'...')"
        if nxt == "(":
            return "command substitution $( )"
        return "variable expansion ($)"
    if c == "`":
        return "command substitution (backticks)"
    if c in "*?[":
        return f"a glob pattern ({c})"
    if c in "{}":
        return "brace expansion ({ })"
    if c == "~" and word_start:
        return "tilde expansion (~)"
    if c == "\r":
        return "a carriage return (CRLF line ends?): the shell keeps it in the last argument"
    if c == "!" and word_start:
        return "a negated command (!)"
    return None


def translate(text: str) -> Translation:
    """Read one old line (a script line or a crontab line, possibly kept commented); raise
    Untranslatable with the reason when tickq cannot run it the same way."""
    commented = False
    stripped = text.strip()
    if stripped.startswith("#!"):
        raise Untranslatable("a shebang line")
    if stripped.startswith("#"):
        commented = True
        text = stripped.lstrip("#").lstrip()
        if not text:
            raise Untranslatable("an empty comment")
    schedule: dict[str, Any] = {}
    notes: list[str] = []
    cron = _cronsplit_words(text)
    if cron is not None:
        fields, text = cron
        schedule, cron_notes = _cron_schedule(fields)
        notes += cron_notes
        if re.search(r"(?<!\\)%", text):
            raise Untranslatable("an unescaped % in a crontab command (cron turns it into a "
                                 "newline and feeds the rest to stdin)")
    scan = _scan(text)
    if scan.incomplete:
        raise Untranslatable("the line ends inside quotes or on a backslash")
    if scan.problems:
        raise Untranslatable("; ".join(scan.problems))
    segments, operators = list(scan.segments), list(scan.operators)
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
    command_text = segments[0].strip()
    words = split_words(command_text)
    if not words:
        raise Untranslatable("no command")
    env: dict[str, str] = {}
    timeout = None
    raw = _raw_words(command_text)
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
    if not words:
        raise Untranslatable("sets variables for the lines below but runs nothing; give the "
                             "kinds an env table instead")
    if "" in words:
        raise Untranslatable("an empty argument (''): a registry command has no empty strings")
    if words[0] in _SHELL_BUILTINS:
        raise Untranslatable(f'"{words[0]}" is a shell builtin: it changes the shell, not a '
                             "job tickq can run")
    if cwd is not None and any(ch in cwd for ch in "~$"):
        raise Untranslatable("the cd directory needs the shell to expand it")
    return Translation(
        argv=tuple(words),
        timeout=timeout, cwd=cwd, env=env, ignores_failure=ignores_failure,
        commented=commented, notes=tuple(notes), **schedule,
    )


def split_words(text: str) -> list[str]:
    """`text` split as the shell would (POSIX rules, no comments)."""
    try:
        return shlex.split(text, comments=False, posix=True)
    except ValueError as e:
        raise Untranslatable(f"cannot split the words: {e}") from None


def _raw_words(text: str) -> list[str]:
    """`text` split into words as written (quotes and backslashes kept), one per shlex word."""
    words: list[str] = []
    current: list[str] = []
    quote: str | None = None
    escaped = False
    for c in text:
        if escaped:
            current.append(c)
            escaped = False
        elif c == "\\" and quote != "'":
            current.append(c)
            escaped = True
        elif quote:
            current.append(c)
            quote = None if c == quote else quote
        elif c in "'\"":
            current.append(c)
            quote = c
        elif c in " \t\n":
            if current:
                words.append("".join(current))
                current = []
        else:
            current.append(c)
    if current:
        words.append("".join(current))
    return words


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


# ---------------------------------------------------------------- crontab schedules


def _cronsplit_words(text: str) -> tuple[list[str], str] | None:
    """(the schedule fields, the command) when `text` is a crontab entry."""
    stripped = text.lstrip()
    if stripped.startswith("@"):
        word, _, rest = stripped.partition(" ")
        return ([word], rest.strip()) if rest.strip() else None
    parts = stripped.split(None, 5)
    if (len(parts) == 6 and all(_CRON_FIELD.fullmatch(f) for f in parts[:5])
            and (parts[0][0].isdigit() or parts[0][0] == "*")):
        return parts[:5], parts[5]
    return None


def _cron_schedule(fields: list[str]) -> tuple[dict[str, Any], list[str]]:
    notes = ["cron ran it in the host's local time zone: check the registry's timezone"]
    if len(fields) == 1:
        special = {"@hourly": {"every": 3600}, "@daily": {"at": ("00:00",)},
                   "@midnight": {"at": ("00:00",)},
                   "@weekly": {"at": ("00:00",), "on": ("sun",)}}
        if fields[0] in special:
            return dict(special[fields[0]]), ([] if fields[0] == "@hourly" else notes)
        raise Untranslatable(f"{fields[0]} has no tickq schedule (tickq schedules are a "
                             "cadence or times of day on weekdays)")
    minute, hour, dom, month, dow = fields
    if dom != "*" or month != "*":
        raise Untranslatable("a day-of-month or month field: tickq schedules are a cadence or "
                             "times of day on weekdays")
    minutes = _cron_values(minute, 0, 59, "minute")
    hours = _cron_values(hour, 0, 23, "hour")
    days = sorted({d % 7 for d in _cron_values(dow, 0, 7, "day of week", _WEEKDAYS)})
    if dow == "*":
        if hour == "*" and (minute == "*" or re.fullmatch(r"\*/\d+", minute)):
            step = 1 if minute == "*" else int(minute[2:])
            if 60 % step == 0:
                return {"every": step * 60}, []
            raise Untranslatable(f"{minute} restarts at every hour, so it is not a fixed "
                                 "cadence")
        if hour == "*" and minutes == [0]:
            return {"every": 3600}, []
    times = tuple(f"{h:02d}:{m:02d}" for h in hours for m in minutes)
    schedule: dict[str, Any] = {"at": times}
    if len(days) < 7:
        # tickq lists weekdays Monday first.
        schedule["on"] = tuple(_WEEKDAYS[d] for d in [1, 2, 3, 4, 5, 6, 0] if d in days)
    return schedule, notes


def _cron_values(text: str, low: int, high: int, what: str,
                 names: Sequence[str] = ()) -> list[int]:
    def number(word: str) -> int:
        lowered = word.lower()
        if lowered in names:
            return names.index(lowered)
        if lowered in _MONTHS:
            raise Untranslatable("month names in a crontab")
        if not word.isdigit() or not low <= int(word) <= high:
            raise Untranslatable(f'{what} "{word}" is not a number from {low} to {high}')
        return int(word)

    values: set[int] = set()
    for part in text.split(","):
        body, _, step_text = part.partition("/")
        step = int(step_text) if step_text.isdigit() and int(step_text) > 0 else None
        if step_text and step is None:
            raise Untranslatable(f'{what} step "{step_text}" is not a positive number')
        if body == "*":
            start, end = low, high
        elif "-" in body:
            a, _, b = body.partition("-")
            start, end = number(a), number(b)
        else:
            start = end = number(body)
            if step:
                end = high
        if start > end:
            raise Untranslatable(f'{what} range "{body}" runs backwards')
        values.update(range(start, end + 1, step or 1))
    return sorted(values)
