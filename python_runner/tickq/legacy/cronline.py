"""What a crontab entry's command runs, exactly as cron runs it.

Cron hands the command to `SHELL -c COMMAND` (SHELL from the crontab, else /bin/sh), after
crontab(5)'s `%` rule: the first unescaped `%` ends the command, the rest (each `%` turned into a
newline, `\\%` into `%`, a newline added at the end) is its standard input. A command that is a
plain argv (words only: no redirection, `$`, glob, `;`, `&&`, quoting the shell would treat
differently, builtin) stays that argv, run without a shell; anything else becomes
`[SHELL, "-c", COMMAND]`, so redirections, `&&`, `$(...)` and `>> log 2>&1` do what they did.
Standard input is passed as data, never spliced into shell text: `/bin/sh -c 'printf %s "$1" |
exec "$0" -c "$2"' SHELL INPUT COMMAND`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from tickq.legacy.names import kind_name
from tickq.legacy.shell import SHELL_BUILTINS
from tickq.legacy.words import Untranslatable, raw_words, scan, split_words

# Feeds INPUT ($1) to `SHELL -c COMMAND` ($0, $2) through a pipe: every value an argument.
STDIN_WRAPPER = 'printf %s "$1" | exec "$0" -c "$2"'
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
# Words before the program that name nothing: wrappers and their values, tests, groups.
_PASSING = frozenset(("cd", "exec", "nice", "ionice", "sudo", "env", "nohup", "time", "(", "{",
                      "!", "command", "chronic", "setsid", "flock", "timeout", "then", "do"))
_TESTS = frozenset(("[", "[[", "test", "if", "while", "until", "true", ":", "echo", "sleep",
                    "export", "]", "]]"))
_SHELLS = frozenset(("sh", "bash", "dash", "zsh", "ksh"))


@dataclass(frozen=True)
class CronCommand:
    argv: tuple[str, ...]
    env: dict[str, str]  # cron's environment, plus a plain argv's leading NAME=value words
    shell: bool  # run as [SHELL, -c, COMMAND] (or through STDIN_WRAPPER)
    name: str  # a kind name from the program the line runs
    notes: list[str] = field(default_factory=list)


def split_percent(text: str) -> tuple[str, str | None]:
    """(the command, its standard input or None) from a crontab command, as cron's
    do_command.c reads them: `\\%` is a `%` in either part, any other backslash stays."""
    command: list[str] = []
    escaped = False
    for i, ch in enumerate(text):
        if escaped:
            if ch == "%":
                command[-1] = "%"
            else:
                command.append(ch)
            escaped = False
            continue
        if ch == "%":
            return "".join(command), _standard_input(text[i + 1:])
        command.append(ch)
        escaped = ch == "\\"
    return "".join(command), None


def _standard_input(text: str) -> str | None:
    if not text:
        return None  # `command%`: no input, as without a %
    out: list[str] = []
    escaped = False
    last = ""
    for ch in text:
        if escaped and ch != "%":
            out.append("\\")
        elif not escaped and ch == "%":
            ch = "\n"
        escaped = ch == "\\"
        if not escaped:
            out.append(ch)
        last = ch
    if escaped:
        out.append("\\")
    if last != "\n":
        out.append("\n")
    return "".join(out)


def read_command(text: str, env: Mapping[str, str]) -> CronCommand:
    """`text` (the entry's command, verbatim) as tickq runs it with cron's `env`."""
    shell = env["SHELL"]
    if not os.path.isabs(shell):
        raise Untranslatable(f"SHELL={shell} is not an absolute path: cron starts it without "
                             "a PATH search, from the user's home folder")
    command, stdin = split_percent(text)
    if not command.strip():
        raise Untranslatable("no command before the first %")
    notes = []
    if stdin is not None:
        notes.append("cron ends the command at the first unescaped % and feeds the rest to "
                     f"its standard input: the command is {command.strip()!r}, the input "
                     f"{len(stdin)} characters, passed the same way (escape a % that is meant "
                     "for the command as \\%)")
        argv = ("/bin/sh", "-c", STDIN_WRAPPER, shell, stdin, command)
        return CronCommand(argv, dict(env), True, _name(command), notes)
    plain = _plain_argv(command)
    if plain is None:
        return CronCommand((shell, "-c", command), dict(env), True, _name(command), notes)
    words, assigned = plain
    return CronCommand(tuple(words), {**env, **assigned}, False, kind_name(words), notes)


def _plain_argv(command: str) -> tuple[list[str], dict[str, str]] | None:
    """(the argv, the NAME=value words before it) when `command` needs no shell to mean what
    it means; None when it does."""
    found = scan(command)
    if found.problems or found.operators or found.incomplete:
        return None
    try:
        words = split_words(found.segments[0])
    except Untranslatable:
        return None
    raw = raw_words(found.segments[0])
    if len(raw) != len(words):
        return None
    assigned: dict[str, str] = {}
    while words and _ASSIGNMENT.match(raw[0]):
        name, _, value = words.pop(0).partition("=")
        raw.pop(0)
        assigned[name] = value
    if not words or "" in words or words[0] in SHELL_BUILTINS:
        return None
    if "/" in words[0] and not os.path.isabs(words[0]):
        return None  # the shell ran it from the home folder; keep that reading whole
    return words, assigned


def _name(command: str, depth: int = 0) -> str:
    """A kind name from the last command of a shell line that runs a program: past `cd`,
    tests, guards and wrappers (`test -x X && X` names X); into `sh -c '...'`."""
    for words in reversed(_commands(command)):
        _drop_wrappers(words)
        if len(words) > 2 and depth == 0 and Path(words[0]).name in _SHELLS \
                and words[1].startswith("-") and words[1].endswith("c"):
            return _name(words[2], depth + 1)
        if words and words[0] not in _TESTS and not words[0].startswith((">", "<")) \
                and ("/" in words[0] or not words[0].startswith("$")):
            return kind_name(words)
    return "cron_job"


def _drop_wrappers(words: list[str]) -> None:
    """Take the wrappers (`nice -n 19`, `flock -w 15 LOCK`, `cd DIR`, `sudo`...) off the
    front of `words`."""
    while words and (Path(words[0]).name in _PASSING or words[0].startswith("-")
                     or words[0].isdigit()):
        dropped = Path(words.pop(0)).name
        if dropped in ("cd", "flock", "timeout"):
            while words and (words[0].startswith("-") or words[0].isdigit()):
                words.pop(0)
            if words:
                words.pop(0)


def _commands(command: str) -> list[list[str]]:
    """The simple commands of a shell line, each as words without its redirections (best
    effort, for a name only): split at every unquoted `&&`, `||`, `;`, `|`, `&` (not one of a
    redirection's: `2>&1`, `&>>`), `(`, `)` and newline."""
    parts, current, quote, escaped = [], [], "", False
    for i, ch in enumerate(command):
        if escaped or (quote and ch != quote) or (ch == "\\" and quote != "'"):
            escaped = ch == "\\" and not escaped and quote != "'"
            current.append(ch)
        elif ch in "'\"":
            quote = "" if quote == ch else ch
            current.append(ch)
        elif ch in "|;()\n" or (ch == "&" and command[i - 1:i] not in "<>"
                                   and command[i + 1:i + 2] != ">"):
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
    parts.append("".join(current))
    found = []
    for part in parts:
        try:
            words = [w for w in split_words(part) if not _ASSIGNMENT.match(w)]
        except Untranslatable:
            continue
        words = _without_redirections(words)
        if words and words[0] in ("then", "do", "else", "if", "while", "until"):
            words.pop(0)
        if words and words[0] not in ("fi", "done", "esac"):
            found.append(words)
    return found


def _without_redirections(words: list[str]) -> list[str]:
    kept, skip = [], False
    for word in words:
        if skip:
            skip = False
        elif re.fullmatch(r"\d*(&?>>?|<)&?", word):
            skip = True  # its target is the next word
        elif not re.match(r"\d*(&?>>?|<)", word):
            kept.append(word)
    return kept
