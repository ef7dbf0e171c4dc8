"""Moving off an old orchestrator: its lines -> registry kinds, and the parity check between them.

An old orchestrator is a shell script of one command per line or a crontab. Each line is read
the way the shell would read it, but only as far as tickq can reproduce it without a shell: the
usual wrappers (`cd DIR &&`, `VAR=x`, `env VAR=x`, `timeout [-s SIG] DUR`, a trailing
`|| true`) become the kind's cwd, env, timeout and a note; anything else the shell would do for
the line (pipes, redirections, `;`, subshells, globs, `$X`, backticks, here-docs...) makes the
line untranslatable, and it is reported with its line number and left alone.

A moved line stays in the old file behind a marker naming its kind, `#tickq:KIND# <old line>`
(or `#tickq:KIND/STEP# ` for a step of a chain), so deleting the marker is the rollback.
"""

from __future__ import annotations

import math
import posixpath
import re
import shlex
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tickq.durations import format_duration, parse_duration
from tickq.registry import KIND_NAME

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
_INTERPRETERS = frozenset((
    "python", "python3", "bash", "sh", "zsh", "node", "ruby", "perl", "php", "uv", "uvx", "npx",
    "deno", "bun", "java",
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
    cron = _cron_split(text)
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
        words = _split(segments[0])
        if len(words) == 2 and words[0] == "cd":
            cwd = words[1]
            segments.pop(0)
            operators.pop(0)
    if operators and operators[-1] == "||" and _split(segments[-1]) in (["true"], [":"]):
        ignores_failure = True
        segments.pop()
        operators.pop()
        notes.append("the old line ignored failures (|| true); tickq records them")
    if operators:
        what = ("&& after anything but a leading `cd DIR &&`" if "&&" in operators
                else "|| other than a trailing `|| true`")
        raise Untranslatable(f"a command list ({what})")
    command_text = segments[0].strip()
    words = _split(command_text)
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


def _split(text: str) -> list[str]:
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


def _cron_split(text: str) -> tuple[list[str], str] | None:
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


# ---------------------------------------------------------------- names and TOML


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
    name = re.sub(r"[^a-z0-9_.-]+", "_", "_".join(parts).lower())
    name = re.sub(r"_+", "_", name).lstrip("_.-")[:90].rstrip("_") or "job"
    if not KIND_NAME.fullmatch(name) or name.startswith("tickq."):
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


def _command_lines(t: Translation, timeout: int, *, legacy: str) -> list[str]:
    lines = [f"command = {_toml_array(t.argv)}", f'timeout = "{format_duration(timeout)}"']
    if t.cwd is not None:
        lines.append(f"cwd = {toml_string(t.cwd)}")
    if t.env:
        pairs = ", ".join(f"{_toml_key(k)} = {toml_string(v)}" for k, v in t.env.items())
        lines.append(f"env = {{ {pairs} }}")
    lines.append(f"legacy = {toml_string(legacy)}")
    return lines


def _schedule_lines(t: Translation | None, every: int) -> list[str]:
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


class ImportError_(Exception):
    """The import as asked cannot be done (a bad --chain range, an untranslatable chain step);
    nothing is written."""


def plan_import(
    text: str, *, taken: Iterable[str] = (), chains: Sequence[Chain] = (),
    irreversible: Sequence[int] = (), every: int = 3600, default_timeout: int | None = None,
) -> ImportPlan:
    """The kinds that would replace the old file's active lines (and the commented lines named in
    `irreversible`, which become irreversible kinds), in file order."""
    lines = read_old_file(text)
    taken = set(taken)
    timeout_default = default_timeout or every
    by_first = {line.first: line for line in lines}
    for n in irreversible:
        line = by_first.get(n)
        if line is None or line.moved_to is not None:
            raise ImportError_(f"--irreversible {n}: no old line starts there, or it was moved")
    chain_of: dict[int, Chain] = {}
    for chain in chains:
        if not KIND_NAME.fullmatch(chain.name) or chain.name in taken:
            raise ImportError_(f'--chain {chain.name}: not a kind name, or the registry (or '
                               "another --chain) already has it")
        taken.add(chain.name)
        members = [ln for ln in lines if chain.first <= ln.first <= chain.last and ln.active]
        if not members:
            raise ImportError_(f"--chain {chain.name} {chain.first} {chain.last}: no active "
                               "command in those lines")
        for line in members:
            if line.first in chain_of:
                raise ImportError_(f"--chain {chain.name}: line {line.first} is already in "
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
                kinds.append(_plan_chain(chain.name, members, every, timeout_default))
            continue
        if line.is_comment and line.first not in irreversible:
            continue
        try:
            t = translate(line.text)
        except Untranslatable as e:
            if line.first in irreversible:
                raise ImportError_(f"--irreversible {line.first}: {e}") from None
            skipped.append((line, str(e)))
            continue
        name = kind_name(t.argv, taken)
        taken.add(name)
        body = [f"[kinds.{name}]"]
        body += _schedule_lines(t, every)
        body += _command_lines(t, t.timeout or timeout_default, legacy=line.text)
        if line.first in irreversible:
            body.append("irreversible = true   # never scheduled until a person runs it once")
        body += _notes(t, timeout_default)
        kinds.append(Moved(name, "\n".join(body) + "\n", [(line, name)]))
    return ImportPlan(kinds, skipped)


def _plan_chain(name: str, members: list[OldLine], every: int, timeout_default: int) -> Moved:
    steps, moved, total = [], [], 0
    step_names: set[str] = set()
    translations = []
    for line in members:
        try:
            translations.append(translate(line.text))
        except Untranslatable as e:
            raise ImportError_(f"--chain {name}: line {line.first} cannot be a step: {e}") from None
    # Crontab lines carry their own schedules; a chain has one, so they must agree.
    schedules = {(t.every, t.at, t.on) for t in translations}
    if len(schedules) > 1:
        raise ImportError_(f"--chain {name}: its lines have different schedules; a chain runs "
                           "all its steps on one")
    for line, t in zip(members, translations, strict=True):
        step = kind_name(t.argv, step_names)
        step_names.add(step)
        timeout = t.timeout or timeout_default
        total += timeout
        body = [f"[[kinds.{name}.steps]]", f"name = {toml_string(step)}"]
        body += _command_lines(t, timeout, legacy=line.text)
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


# ---------------------------------------------------------------- the parity check


class InvalidInput(Exception):
    """The registry or the old file cannot be read (exit 2)."""


@dataclass(frozen=True)
class Entry:
    """A kind or a chain's step as the registry file says, read from the raw TOML so that the
    check does not depend on how the runner models chains."""

    target: str  # "KIND" or "KIND/STEP"
    argv: tuple[str, ...]
    timeout: int | None
    cwd: str | None
    env: Mapping[str, str]
    legacy: str | None
    enabled: bool
    irreversible: bool
    is_chain: bool = False


def registry_entries(path: Path) -> dict[str, Entry]:
    """Every kind and every step of the registry file at `path`, by target."""
    try:
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InvalidInput(f"{path}: file not found") from None
    except tomllib.TOMLDecodeError as e:
        raise InvalidInput(f"{path}: invalid TOML: {e}") from None
    except (OSError, UnicodeDecodeError) as e:
        raise InvalidInput(f"{path}: cannot read: {e}") from None
    kinds = doc.get("kinds", {})
    if not isinstance(kinds, dict):
        raise InvalidInput(f"{path}: [kinds] must be a table")
    entries: dict[str, Entry] = {}
    for name, table in kinds.items():
        where = f'{path}: kind "{name}"'
        if not isinstance(table, dict):
            raise InvalidInput(f"{where}: must be a table")
        enabled = _get(table, "enabled", bool, True, where)
        irreversible = _get(table, "irreversible", bool, False, where)
        timeout = _timeout(table, where)
        cwd = _get(table, "cwd", str, None, where)
        env = _get(table, "env", dict, {}, where)
        steps = table.get("steps")
        entries[name] = Entry(
            name, _argv(table.get("command"), where) if steps is None else (), timeout, cwd, env,
            _get(table, "legacy", str, None, where), enabled, irreversible, steps is not None,
        )
        if steps is None:
            continue
        if not isinstance(steps, list) or not all(isinstance(s, dict) for s in steps):
            raise InvalidInput(f"{where}: steps must be an array of tables")
        for index, step in enumerate(steps):
            step_name = step.get("name")
            if not isinstance(step_name, str):
                raise InvalidInput(f"{where}: steps[{index}].name must be a string")
            at = f'{where}, step "{step_name}"'
            step_timeout = _timeout(step, at)
            entries[f"{name}/{step_name}"] = Entry(
                f"{name}/{step_name}", _argv(step.get("command"), at),
                step_timeout if step_timeout is not None else timeout,
                _get(step, "cwd", str, cwd, at), {**env, **_get(step, "env", dict, {}, at)},
                _get(step, "legacy", str, None, at), enabled, irreversible,
            )
    return entries


def _get(table: Mapping[str, Any], key: str, kind: type, default: Any, where: str) -> Any:
    value = table.get(key, default)
    if value is not default and not isinstance(value, kind):
        raise InvalidInput(f'{where}: key "{key}" has the wrong type')
    return value


def _timeout(table: Mapping[str, Any], where: str) -> int | None:
    if "timeout" not in table:
        return None
    try:
        return parse_duration(table["timeout"])
    except ValueError as e:
        raise InvalidInput(f'{where}: key "timeout": {e}') from None


def _argv(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        raise InvalidInput(f'{where}: key "command" must be a non-empty list of strings')
    return tuple(value)


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
    ours = shlex.join(entry.argv)
    theirs = old.joined
    if ours != theirs:
        failures.append(_mismatch(entry.target, "the command", ours, theirs))
    if old.timeout is not None and (entry.timeout is None or entry.timeout < old.timeout):
        have = format_duration(entry.timeout) if entry.timeout else "none"
        failures.append(f"{label}: timeout {have} is shorter than the old line's "
                        f"{format_duration(old.timeout)}: a run the old watchdog let finish "
                        "would be killed")
    if _normal_dir(entry.cwd) != _normal_dir(old.cwd):
        failures.append(f"{label}: cwd {entry.cwd or '(the registry folder)'} differs from the "
                        f"old line's cd {old.cwd or '(none)'}")
    if dict(entry.env) != dict(old.env):
        # Names only: env values may be secrets, and this output lands in CI logs.
        names = sorted(k for k in {*entry.env, *old.env} if entry.env.get(k) != old.env.get(k))
        failures.append(f"{label}: env differs from the old line's in {', '.join(names)}")
    return failures


def _normal_dir(path: str | None) -> str:
    return "." if path is None else posixpath.normpath(path)
