"""systemd's own words: the quoting of systemd.syntax(7) (quotes anywhere in a word, C escapes
inside and outside them), `%` specifiers (systemd.unit(5)), `$VAR`/`${VAR}` expansion at start
(systemd.service(5), "Command lines") and EnvironmentFile= files (systemd.exec(5)), each as
systemd 252 reads it. Nothing here runs or looks anything up but the unit's name."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

WHITESPACE = " \t\n\r"
_SIMPLE_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t",
                   "v": "\v", "\\": "\\", '"': '"', "'": "'", "s": " "}
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class WordError(ValueError):
    """Text systemd would not take (unbalanced quotes, an unknown specifier): one line."""


def words(text: str, *, cunescape: bool = True, relax: bool = False) -> list[str]:
    """Every word of `text` (extract_first_word with EXTRACT_UNQUOTE, and EXTRACT_CUNESCAPE
    unless told not to; `relax`: an unbalanced quote ends the word instead of failing)."""
    found, pos = [], 0
    while True:
        word, pos = first_word(text, pos, cunescape=cunescape, relax=relax)
        if word is None:
            return found
        found.append(word)


def first_word(text: str, pos: int, *, cunescape: bool = True,
               relax: bool = False) -> tuple[str | None, int]:
    """The word at `pos` (None at the end) and where the next one starts. An unknown escape
    is kept as written, as systemd keeps it after warning."""
    while pos < len(text) and text[pos] in WHITESPACE:
        pos += 1
    if pos >= len(text):
        return None, pos
    out = bytearray()
    quote = ""
    while pos < len(text):
        c = text[pos]
        if c == "\\":
            pos = _escape(text, pos + 1, out, cunescape, quote, relax)
            continue
        if quote:
            if c == quote:
                quote = ""
            else:
                out += c.encode()
        elif c in "'\"":
            quote = c
        elif c in WHITESPACE:
            break
        else:
            out += c.encode()
        pos += 1
    if quote and not relax:
        raise WordError(f"unbalanced quoting in {text.strip()[:60]!r}: systemd ignores it")
    try:
        return out.decode("utf-8"), pos
    except UnicodeDecodeError:
        raise WordError(f"an escape in {text.strip()[:60]!r} makes bytes that are not "
                        "UTF-8 text") from None


def _escape(text: str, pos: int, out: bytearray, cunescape: bool, quote: str,
            relax: bool) -> int:
    """Append the escape at `pos` (just after the backslash); the position after it."""
    if pos >= len(text):
        if not relax:
            out += b"\\"  # kept, as systemd keeps it after warning
        return pos
    if not cunescape:
        out += text[pos].encode()
        return pos + 1
    value, length = _cunescape_one(text, pos)
    if value is None:
        out += ("\\" + text[pos]).encode()  # unknown: kept verbatim (systemd warns)
        return pos + 1
    out += value
    return pos + length


# The numeric escapes: (first character, digits' base, how many, a byte or a code point).
_NUMERIC = {"x": (16, 2, True), "u": (16, 4, False), "U": (16, 8, False)}
_DIGITS = {16: frozenset("0123456789abcdefABCDEF"), 8: frozenset("01234567")}


def _cunescape_one(text: str, pos: int) -> tuple[bytes | None, int]:
    """(the bytes, characters read) of the C escape at `pos`, (None, 0) for an unknown one."""
    c = text[pos]
    if c in _SIMPLE_ESCAPES:
        return _SIMPLE_ESCAPES[c].encode(), 1
    if c in _NUMERIC:
        base, count, byte = _NUMERIC[c]
        body, used = text[pos + 1:pos + 1 + count], 1 + count
    elif c in _DIGITS[8]:
        base, count, byte = 8, 3, True
        body, used = text[pos:pos + 3], 3
    else:
        return None, 0
    if len(body) != count or not set(body) <= _DIGITS[base]:
        return None, 0
    n = int(body, base)
    if n == 0 or (byte and n > 255) or n > 0x10FFFF or 0xD800 <= n < 0xE000:
        return None, 0  # no NUL, nothing past a byte, no code point that is not one
    return (bytes([n]) if byte else chr(n).encode()), used


# ---------------------------------------------------------------- specifiers


@dataclass(frozen=True)
class UnitName:
    """A unit's name as its specifiers see it: foo@bar.service."""

    name: str  # foo@bar.service
    home: str  # %h: /root for the system manager, the user's home for a user manager
    user: str  # %u
    uid: str  # %U
    user_manager: bool  # a unit of systemd --user (its folders differ)

    @property
    def prefix(self) -> str:
        stem = self.name.rsplit(".", 1)[0]
        return stem.split("@", 1)[0]

    @property
    def instance(self) -> str:
        stem = self.name.rsplit(".", 1)[0]
        return stem.split("@", 1)[1] if "@" in stem else ""


def _unescape(text: str) -> str:
    """systemd's unit_name_unescape: "-" is "/", "\\xNN" the byte NN."""
    return re.sub(r"\\x([0-9a-fA-F]{2})", lambda m: chr(int(m.group(1), 16)),
                  text.replace("-", "/"))


def specifiers(unit: UnitName) -> dict[str, str]:
    """The specifiers tickq resolves the way systemd did; the host's own (%H, %m, %b, ...) are
    left out, so a unit naming one is refused rather than given this machine's value."""
    instance_or_prefix = unit.instance or unit.prefix
    found = {
        "n": unit.name, "N": unit.name.rsplit(".", 1)[0], "p": unit.prefix,
        "P": _unescape(unit.prefix), "i": unit.instance, "I": _unescape(unit.instance),
        "j": unit.prefix.rsplit("-", 1)[-1], "J": _unescape(unit.prefix.rsplit("-", 1)[-1]),
        "f": "/" + _unescape(instance_or_prefix).lstrip("/"), "h": unit.home, "u": unit.user,
        "U": unit.uid, "%": "%",
    }
    if not unit.user_manager:
        found |= {"E": "/etc", "C": "/var/cache", "L": "/var/log", "S": "/var/lib",
                  "t": "/run", "T": "/tmp", "V": "/var/tmp", "g": "root", "G": "0"}
    return found


def resolve_specifiers(text: str, known: Mapping[str, str]) -> str:
    """`text` with every %X replaced; WordError naming one tickq does not resolve."""
    def one(match: re.Match[str]) -> str:
        letter = match.group(1)
        if not letter:
            raise WordError(f"a lone % at the end of {text[:60]!r}")
        if letter not in known:
            raise WordError(f"the specifier %{letter} names something of the host it ran on, "
                            "which tickq does not fill in: write its value in the unit")
        return known[letter]
    return re.sub(r"%(.|$)", one, text, flags=re.S)


# ---------------------------------------------------------------- variables


def expand(argv: list[str], env: Mapping[str, str], unset: set[str]) -> list[str]:
    """`argv` as systemd passes it at start: a word that is just "$NAME" becomes the value
    split into words (quotes respected, then removed; none when unset or not a name), and
    "${NAME}" anywhere becomes the value as it is (nothing when unset); "$$" is "$". Names
    expanded to nothing are added to `unset`."""
    out: list[str] = []
    for word in argv:
        if word.startswith("$") and word[1:2] not in ("{", "$"):
            name = word[1:]
            if _NAME.fullmatch(name) and name in env:
                out += words(env[name], cunescape=False, relax=True)
            else:
                unset.add(name)
            continue
        out.append(_replace(word, env, unset))
    return out


def _replace(word: str, env: Mapping[str, str], unset: set[str]) -> str:
    """replace_env without its extensions: ${NAME} and $$ only."""
    def one(match: re.Match[str]) -> str:
        if match.group(0) == "$$":
            return "$"
        name = match.group(1)
        if name not in env:
            unset.add(name)
        return env.get(name, "")
    return re.sub(r"\$\$|\$\{([^}:]*)\}", one, word)
