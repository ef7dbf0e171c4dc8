"""A service's environment as systemd 252 builds it for each command it starts: its fixed PATH,
then `Environment=` (quoted assignments; an empty one resets the list), then the
`EnvironmentFile=` files, read now (a `-` file may be missing; systemd reads them at each
start), whose values override. systemd.exec(5) gives the file's syntax: shell-like quoting,
`#`/`;` comment lines, backslash continuations."""

from __future__ import annotations

import glob
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tickq.legacy.systemd_words import WordError, resolve_specifiers, words

# Debian 12's systemd 252 (built for split /usr) gives every service of the system manager this
# PATH; the manual's value lacks the last two folders, which on a merged /usr are the same.
SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
ENV_FILE_MAX = 1 << 20
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass
class Environment:
    values: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def assignments(value: str, known: Mapping[str, str]) -> list[tuple[str, str]]:
    """The NAME=value pairs of one `Environment=` line (each word unquoted, then its
    specifiers resolved); a word that is no assignment is skipped, as systemd skips it."""
    found = []
    for word in words(value):
        name, equals, text = resolve_specifiers(word, known).partition("=")
        if equals and _NAME.fullmatch(name):
            found.append((name, text))
    return found


def build(lines: Sequence[str], files: Sequence[str], known: Mapping[str, str], root: Path,
          read: Callable[[Path], str]) -> Environment:
    """The environment from the `Environment=` and `EnvironmentFile=` values in effect (each
    list already cut at its last empty assignment). `root` is where the host's files are
    (normally /): a file is looked for at root/its path. `read` reads one file."""
    env = Environment({"PATH": SYSTEM_PATH})
    for line in lines:
        env.values.update(assignments(line, known))
    for spec in files:
        optional = spec.startswith("-")
        pattern = resolve_specifiers(spec[1:] if optional else spec, known)
        if not pattern.startswith("/"):
            env.notes.append(f"EnvironmentFile={spec} is not an absolute path: systemd "
                             "ignores it")
            continue
        _read_files(env, pattern, optional, root, read)
    return env


def _read_files(env: Environment, pattern: str, optional: bool, root: Path,
                read: Callable[[Path], str]) -> None:
    matches = sorted(glob.glob(str(root / pattern.lstrip("/")))) if glob.has_magic(pattern) \
        else [str(root / pattern.lstrip("/"))]
    present = [Path(m) for m in matches if Path(m).is_file()]
    if not present:
        env.notes.append(
            f"EnvironmentFile={'-' if optional else ''}{pattern} is not here"
            + (" (it may be missing; systemd reads it at each start if it appears)" if optional
               else ": systemd refuses to start the service without it; its variables are "
               "missing here"))
        return
    for path in present:
        values = env_file(read(path))
        env.values.update(values)
        shown = ", ".join(sorted(values)) or "nothing"
        env.notes.append(f"EnvironmentFile={pattern}: {shown} copied into env as it reads "
                         "today (systemd read the file at each start; the registry now holds "
                         "its values)")


def env_file(text: str) -> dict[str, str]:
    """The variables of an environment file, as systemd's parse_env_file reads them."""
    found: dict[str, str] = {}
    for key, value in _EnvFileReader(text).pairs():
        if _NAME.fullmatch(key):
            found[key] = value
    return found


class _EnvFileReader:
    """systemd's env-file state machine: keys, then an unquoted, '…' or "…" value."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def pairs(self) -> list[tuple[str, str]]:
        found = []
        while self.pos < len(self.text):
            self._skip(" \t")
            c = self._peek()
            if c in "#;":
                self._comment()
            elif c in "\n\r":
                self.pos += 1
            else:
                key = self._key()
                if key is not None:
                    found.append((key, self._value()))
        return found

    def _peek(self) -> str:
        return self.text[self.pos] if self.pos < len(self.text) else "\n"

    def _skip(self, chars: str) -> None:
        while self.pos < len(self.text) and self.text[self.pos] in chars:
            self.pos += 1

    def _comment(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos] not in "\n\r":
            self.pos += 2 if self.text[self.pos] == "\\" else 1
        self.pos += 1

    def _key(self) -> str | None:
        start = self.pos
        while self.pos < len(self.text) and self.text[self.pos] not in "=\n\r":
            self.pos += 1
        if self._peek() != "=":
            self.pos += 1
            return None  # a line without "=": ignored
        key = self.text[start:self.pos].strip(" \t")
        self.pos += 1
        return key

    def _value(self) -> str:
        """A quote is one only where a value (or a part after a closing quote) starts."""
        out: list[str] = []
        trailing = 0  # unquoted whitespace at the end, dropped
        self._skip(" \t")
        starting = True
        while self.pos < len(self.text):
            c = self.text[self.pos]
            self.pos += 1
            if c in "\n\r":
                break
            if starting and c in "'\"":
                out.append(self._quoted(c))
                self._skip(" \t")
                trailing = 0
                continue
            starting = False
            if c == "\\":
                out.append(self._unquoted_escape())
                trailing = 0
            else:
                out.append(c)
                trailing = trailing + 1 if c in " \t" else 0
        text = "".join(out)
        return text[:len(text) - trailing] if trailing else text

    def _unquoted_escape(self) -> str:
        if self.pos >= len(self.text):
            return ""
        c = self.text[self.pos]
        self.pos += 1
        return "" if c in "\n\r" else c

    def _quoted(self, quote: str) -> str:
        out = []
        while self.pos < len(self.text):
            c = self.text[self.pos]
            self.pos += 1
            if c == quote:
                break
            if c == "\\" and quote == '"' and self.pos < len(self.text):
                nxt = self.text[self.pos]
                self.pos += 1
                out.append(nxt if nxt in '"\\`$' else "" if nxt in "\n\r" else "\\" + nxt)
            else:
                out.append(c)
        return "".join(out)


def check_words(value: str) -> str | None:
    """Why an `Environment=` line would be ignored by systemd, or None."""
    try:
        words(value)
    except WordError as e:
        return str(e)
    return None
