"""reference/commands.md: every command and flag, from the argument parser itself
(tickq.cli.main.build_parser, which tickq.cli.options fills), with each command's notes from
command-notes.md beside this file.

The parser is built in a clean environment (no TICKQ_REGISTRY, DATABASE_URL, TICKQ_LOG_FORMAT,
COLUMNS fixed), so the page says what the defaults are, not what they were where it was made.
"""

from __future__ import annotations

import argparse
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager

from common import GEN, code, header, table

NOTES = GEN / "command-notes.md"
CLEAN = ("TICKQ_REGISTRY", "DATABASE_URL", "TICKQ_LOG_FORMAT")


@contextmanager
def clean_environment() -> Iterator[None]:
    saved = {k: os.environ.get(k) for k in (*CLEAN, "COLUMNS")}
    for name in CLEAN:
        os.environ.pop(name, None)
    os.environ["COLUMNS"] = "100"
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def parser() -> argparse.ArgumentParser:
    from tickq.cli.main import build_parser

    with clean_environment():
        return build_parser([])


def _subparsers(p: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in p._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


Named = tuple[str, argparse.ArgumentParser]


def commands(p: argparse.ArgumentParser | None = None) -> Iterator[Named]:
    """("tickq tick", its parser), ..., depth first, in the parser's order; a command with
    actions of its own (agent, legacy) first, then each action."""
    p = p or parser()
    for name, sub in _subparsers(p).items():
        yield f"tickq {name}", sub
        for action, inner in _subparsers(sub).items():
            yield f"tickq {name} {action}", inner


def _common(p: argparse.ArgumentParser) -> list[argparse.Action]:
    """The options every queue command takes (those of `tickq tick` but its own)."""
    tick = _subparsers(p)["tick"]
    return [a for a in tick._actions
            if a.option_strings and a.dest not in ("help", "replace_queue")]


def _spelling(action: argparse.Action) -> str:
    flags = ", ".join(action.option_strings) or action.metavar or action.dest
    if action.option_strings and action.nargs != 0:
        metavar = action.metavar or (
            "{" + ",".join(action.choices) + "}" if action.choices else action.dest.upper())
        if isinstance(metavar, tuple):
            metavar = " ".join(metavar)
        flags += f" {metavar}"
    return flags


def _default(action: argparse.Action) -> str:
    value = action.default
    if action.nargs == 0 or value in (None, argparse.SUPPRESS) or value == []:
        return ""
    return code(value)


def _help(action: argparse.Action) -> str:
    text = action.help or ""
    if action.choices and not action.option_strings:
        text = (text + " " if text else "") + "one of " + ", ".join(map(code, action.choices))
    return text


def _rows(p: argparse.ArgumentParser, common: set[str]) -> list[tuple[str, str, str]]:
    rows = []
    for action in p._actions:
        if action.dest in ("help",) or isinstance(action, argparse._SubParsersAction):
            continue
        if action.option_strings and action.dest in common:
            continue
        rows.append((code(_spelling(action)), _default(action), _help(action)))
    return rows


def notes() -> dict[str, str]:
    """{"tickq tick": its notes} from command-notes.md."""
    text = re.sub(r"<!--.*?-->", "", NOTES.read_text(), flags=re.DOTALL)
    found = {}
    for block in re.split(r"^## ", text, flags=re.MULTILINE)[1:]:
        title, _, body = block.partition("\n")
        found[title.strip()] = body.strip()
    return found


def page() -> str:
    p = parser()
    common = _common(p)
    common_dests = {a.dest for a in common}
    written = notes()
    names = [name for name, _ in commands(p)]
    unknown = sorted(set(written) - set(names))
    missing = [name for name in names if name.count(" ") == 1 and name not in written]
    if unknown or missing:
        raise SystemExit(f"command-notes.md: sections for unknown commands {unknown}, "
                         f"none for {missing}")
    parts = [header("Commands", "the argument parser, tickq.cli.options; notes from "
                    "docs/gen/command-notes.md"), INTRO]
    parts.append(table(("option", "default", "what"),
                       [(code(_spelling(a)), _default(a), _help(a)) for a in common]))
    parts.append(EXITS)
    for name, sub in commands(p):
        level = "##" if name.count(" ") == 1 else "###"
        parts.append(f"{level} `{name}`\n")
        if sub.description:
            text = sub.description.rstrip(".")
            parts.append(text[:1].upper() + text[1:] + ".\n")
        with clean_environment():
            usage = sub.format_usage().removeprefix("usage: ").rstrip()
        usage = usage.replace("\n" + " " * len("usage: "), "\n")
        parts.append("```text\n" + usage + "\n```\n")
        takes_common = common_dests <= {a.dest for a in sub._actions}
        rows = _rows(sub, common_dests if takes_common else set())
        if rows:
            parts.append(table(("argument", "default", "what"), rows))
        if takes_common:
            parts.append("And the [common options](#common-options).\n")
        if sub.epilog:
            parts.append("```text\n" + sub.epilog.rstrip() + "\n```\n")
        if name in written:
            parts.append(written[name] + "\n")
    return "\n".join(parts)


INTRO = """
Every command of `tickq`, with its arguments, as the argument parser defines them (`tickq
COMMAND --help` prints the same; `tickq --version` prints the version). What the commands are
for, by task: [How-to guides](../how-to/index.md).

## Common options

Every command that works on a queue takes these:
"""

EXITS = """
Every command ends in one line when it fails, never a traceback, with the exit status of
[Exit statuses and errors](exit-statuses.md): 0 done, 1 a "no" answer, 2 invalid registry or
configuration, 3 the database cannot be reached, 128+N stopped by signal N.
"""
