"""Run a tutorial page's commands, in order, in one shell, and compare what they print with what
the page shows (tests_py/test_docs_tutorials.py), or write what they print into the page
(`python docs/gen/tutorials.py --update docs/tutorials/first-tick.md ...`).

A page is read in order:
- a fenced block with a title (```` ```toml title="registry.toml" ````) is a file the reader
  writes: the shell writes it, relative to its folder at that point;
- a ```` ```console ```` block holds commands (`$ ` lines, `\\` continuing one) each followed
  by what it prints (stdout and stderr, as a terminal shows them). A line `...` alone stands for
  output the page does not show. A command must exit 0, unless the next command is
  `echo $?`, which then shows its status.

What differs from run to run is masked on both sides before the comparison: times, dates,
durations, run ids, the hash in a database's name, and the folders the test made (the reader's
home, the checkout, the embedded server's data). Log lines (those starting with a time) of runs
that go on at once may come in another order, so they are compared as a set.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

FENCE = re.compile(r"^```+\s*([\w+-]*)\s*(?:title=\"([^\"]+)\")?\s*$")
STEP = "@@tickq-doc-step"
# A page that starts where another left off says so in a comment: its reader has tickq on PATH.
ON_PATH = "<!-- test: tickq on PATH -->"
# A page whose commands run from the checkout of tickq (README.md's `make demo`).
IN_CHECKOUT = "<!-- test: in the checkout -->"


def start(page: str, home: Path) -> Path:
    """The folder a page's shell starts in."""
    return home / "tickq" if IN_CHECKOUT in page else home
END = "@@tickq-doc-eof"


class File(NamedTuple):
    path: str
    text: str


class Command(NamedTuple):
    line: str  # the command as one shell line
    shown: list[str]  # what the page shows it prints
    start: int  # the page's line of its first output line (0-based), for --update
    end: int  # one past its last output line


def steps(page: str) -> Iterator[File | Command]:
    lines = page.splitlines()
    i = 0
    while i < len(lines):
        fence = FENCE.match(lines[i])
        if not fence or not (fence.group(2) or fence.group(1) == "console"):
            i += 1
            continue
        close = next(j for j in range(i + 1, len(lines)) if lines[j].startswith("```"))
        if fence.group(2):
            yield File(fence.group(2), "\n".join(lines[i + 1:close]) + "\n")
        else:
            yield from _commands(lines, i + 1, close)
        i = close + 1


def _commands(lines: list[str], start: int, stop: int) -> Iterator[Command]:
    i = start
    while i < stop:
        if not lines[i].startswith("$ "):
            raise ValueError(f"line {i + 1}: output before any command: {lines[i]!r}")
        command = lines[i][2:]
        while command.endswith("\\"):
            i += 1
            command = command[:-1] + " " + lines[i].strip()
        i += 1
        first = i
        while i < stop and not lines[i].startswith("$ "):
            i += 1
        yield Command(command, lines[first:i], first, i)


def script(page: str) -> tuple[str, list[Command]]:
    """The shell script that runs the page, and its commands in order."""
    # Each command's status is kept in __rc and given back before the next command runs, so
    # the markers between them do not hide it from an `echo $?`.
    parts, commands = ["set +e", "exec 2>&1", "__rc=0"], []
    for step in steps(page):
        if isinstance(step, File):
            assert END not in step.text
            parts.append(f"mkdir -p \"$(dirname '{step.path}')\" && cat > '{step.path}' "
                         f"<<'{END}'\n{step.text}{END}")
        else:
            parts += [f"echo '{STEP} {len(commands)}'", "(exit $__rc)", step.line,
                      "__rc=$?; echo \"@@rc $__rc\""]
            commands.append(step)
    return "\n".join(parts) + "\n", commands


class Ran(NamedTuple):
    command: Command
    printed: list[str]
    status: int


def run(page: str, *, cwd: Path, env: dict[str, str], timeout: float = 600) -> list[Ran]:
    text, commands = script(page)
    done = subprocess.run(["bash", "-c", text], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=timeout, stdin=subprocess.DEVNULL, check=False)
    out = done.stdout.split(f"{STEP} ")[1:]
    if len(out) != len(commands):
        raise AssertionError(f"the page's shell stopped after {len(out)} of {len(commands)} "
                             f"commands:\n{done.stdout[-3000:]}")
    found = []
    for command, chunk in zip(commands, out):
        body = chunk.split("\n", 1)[1] if "\n" in chunk else ""
        body, _, rc = body.rpartition("@@rc ")
        found.append(Ran(command, body.splitlines(), int(rc.strip())))
    return found


MASKS = [
    (re.compile(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:?\d\d)?"), "<time>"),
    (re.compile(r"(<time>) (?!INFO|WARNING|ERROR)[A-Z]{2,5}\b"), r"\1 <zone>"),  # GMT, BST
    (re.compile(r"\b(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d\d "), ""),
    (re.compile(r"\b\d\d:\d\d(:\d\d)?\b"), "<hh:mm>"),
    (re.compile(r"\b(Mon|Tue|Wed|Thu|Fri|Sat|Sun)\b"), "<day>"),
    # "in 4m", "in 23h49m", "12m ago", "now" (tickq.registry.durations.coarse_duration)
    (re.compile(r"\b(in \d+[smhd]( ?\d+[smhd])?|\d+[smhd]( ?\d+[smhd])? ago|now)\b"), "<rel>"),
    (re.compile(r"\b\d+(\.\d+)?(ms|s)\b"), "<dur>"),
    (re.compile(r"(duration_s|run_id|pid|port)=\d+(\.\d+)?"), r"\1=<n>"),
    (re.compile(r"\brun \d+\b"), "run <n>"),
    # The schema's version: the number of migrations and the API files' checksum.
    (re.compile(r"(db\.migrated) .*"), r"\1 <schema>"),
    (re.compile(r"(tickq_[a-z0-9_]+?)_[0-9a-f]{10}\b"), r"\1_<hash>"),
]


# A table's rule under its header is as wide as the column's widest (masked) value.
RULE = re.compile(r"-{3,}")
# How many runs ended how: a JSON object whose keys come in the order the runs ended.
OUTCOMES = re.compile(r'outcomes="(\{.*?\})"')


def masked(lines: list[str], folders: dict[str, str]) -> list[str]:
    """`lines` with what differs between runs masked and runs of spaces made one."""
    out = []
    for line in lines:
        for real, shown in folders.items():
            line = line.replace(real, shown)
        for pattern, mask in MASKS:
            line = pattern.sub(mask, line)
        line = RULE.sub("---", OUTCOMES.sub(_sorted_outcomes, line))
        out.append(" ".join(line.split()))
    return out


def _sorted_outcomes(match: re.Match[str]) -> str:
    counts = json.loads(match.group(1).replace('\\"', '"'))
    return "outcomes=" + json.dumps(dict(sorted(counts.items())))


def differences(ran: list[Ran], folders: dict[str, str]) -> list[str]:
    """What the page shows that its commands did not print, one entry per command."""
    problems = []
    for i, (command, printed, status) in enumerate(ran):
        shows_status = i + 1 < len(ran) and ran[i + 1].command.line == "echo $?"
        if status != 0 and not shows_status:
            problems.append(f"`{command.line}` exited {status}:\n" + "\n".join(printed))
        if command.shown == ["..."]:
            continue
        want, got = masked(command.shown, folders), masked(printed, folders)
        if not _same(want, got):
            problems.append(f"`{command.line}` printed:\n" + "\n".join(printed)
                            + "\n--- the page shows:\n" + "\n".join(command.shown))
    return problems


def _same(want: list[str], got: list[str]) -> bool:
    def split(lines: list[str]) -> tuple[list[str], Counter]:
        logs = [ln for ln in lines if ln.startswith("<time> ")]
        return [ln for ln in lines if not ln.startswith("<time> ")], Counter(logs)

    return split(want) == split(got)


def updated(page: str, ran: list[Ran], folders: dict[str, str]) -> str:
    """The page with each command's shown output replaced by what it printed (folders shown
    as the page names them), except output the page elides with `...`."""
    lines = page.splitlines()
    for command, printed, _ in reversed(ran):
        if command.shown == ["..."]:
            continue
        shown = []
        for line in printed:
            for real, name in folders.items():
                line = line.replace(real, name)
            shown.append(line)
        lines[command.start:command.end] = shown
    return "\n".join(lines) + "\n"


def main() -> int:
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests_py"))
    from tutorial_shell import reader  # the test's own setup: a home, a checkout, a server

    parser = argparse.ArgumentParser(description="write what a tutorial's commands print "
                                     "into the page")
    parser.add_argument("--update", nargs="+", type=Path, required=True, metavar="PAGE")
    args = parser.parse_args()
    with reader() as new_home:
        for path in args.update:
            page = path.read_text()
            home, env, folders = new_home(f"{path.stem}-0", ON_PATH in page)
            path.write_text(updated(page, run(page, cwd=start(page, home), env=env), folders))
            print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
