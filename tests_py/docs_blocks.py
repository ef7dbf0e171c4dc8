"""The code of the docs (docs/**/*.md and README.md), read as the tests of
tests_py/test_docs_blocks.py check it: fenced blocks with the marker comment before each, the
lines of code that run `tickq`, and the `tickq.*` names the prose gives.

A marker is an HTML comment on the line right before a fence:
- `<!-- refused -->`: a registry that shows a mistake; the next ```text block is what tickq
  prints about it;
- `<!-- not a registry -->`: TOML that is some other file (a `.taplo.toml`);
- `<!-- not run: why -->`: SQL that needs something of the reader's (their role).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

REPO = Path(__file__).resolve().parent.parent
# docs/gen holds the generators' inputs (their output is in docs/reference).
PAGES = sorted([*(p for p in (REPO / "docs").rglob("*.md") if "gen" not in p.parts),
                REPO / "README.md"])
FENCE = re.compile(r"^(`{3,})\s*([\w+-]*)(.*)$")
MARKER = re.compile(r"^<!--\s*(.*?)\s*-->$")


class Block(NamedTuple):
    page: Path
    line: int  # 1-based line of the opening fence
    language: str
    info: str  # what follows the language: title="..."
    text: str
    marker: str  # the comment right before the fence, or ""

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(REPO)}:{self.line}"


def blocks(page: Path) -> list[Block]:
    lines = page.read_text().splitlines()
    found, i = [], 0
    while i < len(lines):
        fence = FENCE.match(lines[i])
        if not fence:
            i += 1
            continue
        close = next(j for j in range(i + 1, len(lines))
                     if lines[j].startswith(fence.group(1)) and not lines[j].strip("`"))
        before = MARKER.match(lines[i - 1]) if i else None
        found.append(Block(page, i + 1, fence.group(2), fence.group(3).strip(),
                           "\n".join(lines[i + 1:close]) + "\n",
                           before.group(1) if before else ""))
        i = close + 1
    return found


def all_blocks(language: str) -> list[Block]:
    return [b for page in PAGES for b in blocks(page) if b.language == language]


def following_text(block: Block) -> Block:
    """The ```text block that comes next on the block's page (what a refusal prints)."""
    later = [b for b in blocks(block.page) if b.line > block.line]
    assert later and later[0].language == "text", f"{block.where}: no ```text block after it"
    return later[0]


def _indented_code(lines: list[str]) -> Iterator[tuple[int, str]]:
    """Lines of Markdown's indented code blocks (four spaces, after a blank line), outside
    fences and lists."""
    inside, fenced = False, False
    for n, line in enumerate(lines, 1):
        if FENCE.match(line):
            fenced = not fenced
            continue
        if fenced:
            continue
        if line.startswith("    ") and (inside or (n > 1 and not lines[n - 2].strip())):
            inside = True
            yield n, line[4:]
        elif line.strip():
            inside = False


def _uncommented(line: str) -> str:
    return re.split(r"\s#\s", line, maxsplit=1)[0]


# Not inside a word, a path or a quoted string: `["mail", "-s", "tickq alert"]` is a subject.
COMMAND = re.compile(r"(?<![\w./$\"-])tickq\s+[a-z]")
STOP = re.compile(r"\s(\||;|&&|#|>|<|\))|\)|`|\s*$")


def tickq_lines(page: Path) -> Iterator[tuple[str, str]]:
    """(where, the `tickq ...` command) of every command line in the page's code: console and
    shell blocks, indented code, and inline code spans."""
    lines = page.read_text().splitlines()
    code: list[tuple[int, str]] = []
    for block in blocks(page):
        if block.language == "console":  # the commands, not what they print
            code += [(block.line + 1 + k, line[2:]) for k, line in
                     enumerate(block.text.splitlines()) if line.startswith("$ ")]
        elif block.language in ("sh", "bash", "text", "") and not block.info:
            code += [(block.line + 1 + k, _uncommented(line))
                     for k, line in enumerate(block.text.splitlines())]
    code += [(n, _uncommented(line)) for n, line in _indented_code(lines)]
    for n, line in enumerate(lines, 1):
        if not line.startswith("    ") and not FENCE.match(line):
            code += [(n, span) for span in re.findall(r"`([^`]+)`", line)]
    rel = page.relative_to(REPO)
    for n, line in code:
        # A comment, or a line tickq printed ("tickq: registry.toml: ...").
        if line.lstrip().startswith(("#", "tickq: ")):
            continue
        for match in COMMAND.finditer(line):
            rest = line[match.start():]
            end = STOP.search(rest, 6)
            yield f"{rel}:{n}", rest[: end.start() if end else len(rest)].strip()
