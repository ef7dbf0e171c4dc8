"""The shell's words, read without a shell: where a line's `&&` and `||` fall, which of its
characters need a shell to mean what they mean, and its words as the shell would split them."""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field


class Untranslatable(Exception):
    """A line tickq cannot run the same way without a shell; the message says why."""


@dataclass
class Scan:
    # The text between `&&` / `||`, continuations and comment removed.
    segments: list[str] = field(default_factory=list)
    operators: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    incomplete: bool = False  # ends inside quotes or on a backslash: the line goes on


def scan(text: str) -> Scan:
    """Walk `text` the way the shell's parser would, noting every feature that needs a shell."""
    return _Scanner(text).run()


class _Scanner:
    """One walk over a text: each step reads one character (or an escaped pair) in the state
    the characters before it left (inside single quotes, double quotes, or none)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.found = Scan()
        self.current: list[str] = []
        self.quote: str | None = None
        self.word_start = True
        self.in_comment = False

    def run(self) -> Scan:
        i: int | None = 0
        while i is not None and i < len(self.text):
            i = self._step(i)
        self.found.segments.append("".join(self.current))
        # An odd run of trailing backslashes outside quotes continues the line, as an open
        # quote does.
        trailing = 0 if self.in_comment else len(self.text) - len(self.text.rstrip("\\"))
        self.found.incomplete = self.quote is not None or trailing % 2 == 1
        return self.found

    def _problem(self, message: str) -> None:
        if message not in self.found.problems:
            self.found.problems.append(message)

    def _step(self, i: int) -> int | None:
        """Read at `i`; the index of the next character, or None when the reading ends."""
        c = self.text[i]
        nxt = self.text[i + 1] if i + 1 < len(self.text) else ""
        if self.quote == "'":
            self.current.append(c)
            self.quote = None if c == "'" else self.quote
            return i + 1
        if self.quote == '"':
            return self._double_quoted(i, c, nxt)
        return self._unquoted(i, c, nxt)

    def _double_quoted(self, i: int, c: str, nxt: str) -> int:
        if c == "\\":
            if nxt == "\n":
                return i + 2
            if nxt in ("$", "`"):
                self._problem(f'a backslash before "{nxt}" inside double quotes (tickq cannot '
                              "tell it from the shell's own escaping)")
            self.current.append(c + nxt)
            return i + 2
        if c == "$":
            self._problem("variable expansion or command substitution ($) inside double quotes")
        elif c == "`":
            self._problem("command substitution (backticks)")
        elif c == '"':
            self.quote = None
        self.current.append(c)
        return i + 1

    def _unquoted(self, i: int, c: str, nxt: str) -> int | None:
        if c == "\\":
            if nxt == "\n":  # a line continuation: the shell removes both characters
                return i + 2
            self.current.append(c + nxt)
            self.word_start = False
            return i + 2
        if c == "#" and self.word_start:
            # A comment runs to the end of its physical line; a backslash in it continues
            # nothing.
            end = self.text.find("\n", i)
            if end < 0:
                self.in_comment = True
                return None
            return end
        if c == "\n":
            self._problem("a second command on the next line")
            return None
        if c in "|&" and nxt == c:
            self.found.operators.append(c + c)
            self.found.segments.append("".join(self.current))
            self.current = []
            self.word_start = True
            return i + 2
        if c in "'\"":
            self.quote = c
            self.word_start = False
        elif c in " \t":
            self.word_start = True
        else:
            reason = _shell_feature(c, nxt, self.word_start)
            if reason:
                self._problem(reason)
            self.word_start = False
        self.current.append(c)
        return i + 1


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


def split_words(text: str) -> list[str]:
    """`text` split as the shell would (POSIX rules, no comments)."""
    try:
        return shlex.split(text, comments=False, posix=True)
    except ValueError as e:
        raise Untranslatable(f"cannot split the words: {e}") from None


def raw_words(text: str) -> list[str]:
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
