"""Kind names for imported jobs: the program's name and up to two subcommand words, made to fit
the kind-name pattern (the database checks the rule itself; these only produce names it
takes)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from pathlib import Path

_INTERPRETERS = frozenset((
    "python", "python3", "bash", "sh", "zsh", "node", "ruby", "perl", "php", "uv", "uvx", "npx",
    "deno", "bun", "java",
))  # fmt: skip
_VERSIONED = re.compile(r"(python|php|perl|ruby|node)[0-9.]*")
# Prefixes of kinds the registry may not name (the built-in kinds, user-built agents).
RESERVED = ("tickq.", "agent.")


def fitted(text: str) -> str:
    """`text` made into a kind name: lower case, a-z 0-9 _ . - only, starting with a letter or
    digit, at most 90 characters (room for a "_2" suffix)."""
    name = re.sub(r"[^a-z0-9_.-]+", "_", text.lower())
    return re.sub(r"_+", "_", name).lstrip("_.-")[:90].rstrip("_") or "job"


def _interpreter(word: str) -> bool:
    name = Path(word).name
    return name in _INTERPRETERS or bool(_VERSIONED.fullmatch(name))


def kind_name(argv: Sequence[str], taken: Iterable[str] = ()) -> str:
    """A kind name from the command: the program's name and up to two subcommand words after
    it, made to fit the kind-name pattern and not in `taken`."""
    words = list(argv) or ["job"]
    while len(words) > 1 and _interpreter(words[0]):
        words.pop(0)
        while len(words) > 1 and words[0].startswith("-"):
            words.pop(0)
    program = re.sub(r"\.(sh|py|rb|js|pl|bash|php)$", "", Path(words[0]).name)
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
    name = fitted("_".join(parts))
    if name.startswith(RESERVED):
        name = "job_" + name.replace(".", "_")
    taken = set(taken)
    candidate, n = name, 2
    while candidate in taken:
        candidate, n = f"{name}_{n}", n + 1
    return candidate
