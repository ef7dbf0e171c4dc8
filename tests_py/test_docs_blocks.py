"""The docs' code is checked against the product (docs/**/*.md and README.md; docs_blocks.py
says how they are read and marked):

- every TOML block is a registry, or a fragment of one, that the shape check and the database's
  `registry_problems` accept; a block marked `<!-- refused -->` is refused with exactly the lines
  the ```text block after it shows;
- every SQL block runs on a migrated queue;
- every `tickq ...` line of code names a command, action and options the parser has;
- every `tickq.NAME` the pages give is an object of the schema, a module of the package or a
  name tickq gives something else (the built-in kind, a setting), and every `job_run.COLUMN`
  and `job_kind.COLUMN` exists.
"""

from __future__ import annotations

import argparse
import importlib
import re
import shlex
import tomllib
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from docs_blocks import PAGES, REPO, Block, all_blocks, following_text, tickq_lines

from tickq import db
from tickq.db.api.registry import registry_problems
from tickq.registry import RegistryError, load_registry

TOML = [b for b in all_blocks("toml") if b.marker != "not a registry"]
SQL = [b for b in all_blocks("sql") if not b.marker.startswith("not run")]
# A fragment without kinds (a [settings] or [agents] section) is checked beside this kind.
BASE_KIND = '\n[kinds.docs_example]\ncommand = ["true"]\nevery = "5m"\ntimeout = "1m"\n'


@pytest.fixture(scope="module")
def queue(pg_server_url: str, template_db: str) -> Iterator[psycopg.Connection]:
    name = f"t_docs_{uuid.uuid4().hex}"
    url = db.create_database(pg_server_url, name, template=template_db)
    try:
        with db.connect(url) as conn:
            yield conn
    finally:
        db.drop_database(pg_server_url, name)


def verdict(block: Block, folder: Path, conn: psycopg.Connection) -> list[str]:
    """What `tickq sync` would print about the block as a registry file: its problems."""
    text = block.text if "kinds" in tomllib.loads(block.text) else block.text + BASE_KIND
    (folder / "jobs").mkdir()
    path = folder / "registry.toml"
    path.write_text(text)
    try:
        problems = registry_problems(conn, load_registry(path))
    except RegistryError as e:
        problems = e.problems
    lines = [f"tickq: {p}".replace(str(path), "registry.toml") for p in problems]
    return [*lines, f"tickq: invalid registry: {len(lines)} problem(s)"] if lines else []


def test_the_blocks_are_found() -> None:
    assert len(TOML) >= 15 and len(SQL) >= 1
    assert any(b.marker == "refused" for b in TOML)


@pytest.mark.parametrize("block", TOML, ids=[b.where for b in TOML])
def test_every_toml_block_is_a_registry_tickq_judges_as_the_page_says(
        block: Block, tmp_path: Path, queue: psycopg.Connection) -> None:
    problems = verdict(block, tmp_path, queue)
    if block.marker == "refused":
        assert problems == following_text(block).text.splitlines(), block.where
    else:
        assert block.marker == "", f"{block.where}: unknown marker {block.marker!r}"
        assert problems == [], block.where


@pytest.mark.parametrize("block", SQL, ids=[b.where for b in SQL])
def test_every_sql_block_runs(block: Block, queue: psycopg.Connection) -> None:
    statements = [s for s in block.text.split(";")
                  if any(ln.strip() and not ln.strip().startswith("--")
                         for ln in s.splitlines())]
    assert statements, block.where
    with queue.transaction(force_rollback=True):
        for statement in statements:
            queue.execute(statement).fetchall()


# ---------------------------------------------------------------- command lines


def _parsers() -> dict[str, argparse.ArgumentParser]:
    from tickq.cli.main import build_parser

    return _subparsers(build_parser([]))


def _subparsers(p: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    actions = [a for a in p._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(actions[0].choices) if actions else {}


# Phrases in backticks that start with "tickq" and are no command: database comments.
NOT_COMMANDS = ("tickq scratch template", "tickq scratch pool")


def problem_of(line: str, commands: dict[str, argparse.ArgumentParser]) -> str | None:
    """Why `line` (tickq ...) is no command the parser has, or None. Placeholders (KIND, a
    [--flag N] synopsis, a|b alternatives) are read as the docs mean them."""
    if line.startswith(NOT_COMMANDS):
        return None
    try:
        words = shlex.split(line.rstrip("\\"))[1:]
    except ValueError:
        words = line.split()[1:]
    words = [w.strip("[]") for w in words if w.strip("[]")]
    wrong = [c for c in words[0].split("|") if c not in commands]
    if wrong:
        return f"no command {wrong}"
    parser, rest = commands[words[0].split("|")[0]], words[1:]
    actions = _subparsers(parser)
    if actions and rest and re.fullmatch(r"[a-z]+(\|[a-z]+)*", rest[0]):
        wrong = [a for a in rest[0].split("|") if a not in actions]
        if wrong:
            return f"no action {wrong} of tickq {words[0]}"
        parser, rest = actions[rest[0].split("|")[0]], rest[1:]
    if words[0] == "psql":  # psql's own options pass through
        return None
    options = {o for a in parser._actions for o in a.option_strings}
    for word in rest:
        flag = word.split("=", 1)[0]
        if flag.startswith("--") and flag != "--" and flag not in options:
            return f"no option {flag} of tickq {words[0]}"
    choices = [a.choices for a in parser._actions if not a.option_strings and a.choices
               and not isinstance(a, argparse._SubParsersAction)]
    given = [w for w in rest if re.fullmatch(r"[a-z]+(\|[a-z]+)*", w)]
    if choices and given and any(c not in choices[0] for c in given[0].split("|")):
        return f"{given[0]!r} is not one of {sorted(choices[0])}"
    return None


LINES = [(where, line) for page in PAGES for where, line in tickq_lines(page)]


def test_the_command_lines_are_found() -> None:
    assert len(LINES) > 100


def test_every_tickq_command_line_is_one_the_parser_has() -> None:
    commands = _parsers()
    problems = [f"{where}: `{line}`: {why}" for where, line in LINES
                if (why := problem_of(line, commands))]
    assert not problems, "\n".join(problems)


def test_a_wrong_command_line_is_caught() -> None:
    commands = _parsers()
    assert problem_of("tickq tick --replace-queue", commands) is None
    assert problem_of("tickq status --wide --watch 5", commands) is None
    assert "no option --widest" in problem_of("tickq status --widest", commands)
    assert "no command" in problem_of("tickq statuss", commands)
    assert "no action" in problem_of("tickq agent ad NAME", commands)
    assert "not one of" in problem_of("tickq systemd instal", commands)
    assert "no command" in problem_of("tickq launchd|systemdd print", commands)


# ---------------------------------------------------------------- names


# tickq.NAME that are no schema object or module: the built-in kind, the settings of
# sql/roles.sql (tickq.access and the script's own), and files tickq writes (tickq.log, its
# rotated tickq.log.1, tickq.prom), and the migrator's advisory lock key (tickq.migrate).
OTHER_NAMES = {"housekeeping", "access", "roles_owner", "roles_dispatcher", "roles_reader",
               "log.1", "prom", "migrate"}


def named() -> Iterator[tuple[str, str]]:
    for page in PAGES:
        rel = page.relative_to(REPO)
        for n, line in enumerate(page.read_text().splitlines(), 1):
            for span in re.findall(r"`([^`]+)`", line) or ([line] if "tickq." in line else []):
                for name in re.findall(r"(?<![\w/-])tickq\.([a-z_][a-z0-9_.]*[a-z0-9_])", span):
                    yield f"{rel}:{n}", name


def test_every_tickq_name_the_docs_give_exists(queue: psycopg.Connection) -> None:
    objects = {r for (r,) in queue.execute(
        "SELECT relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
        " WHERE nspname = 'tickq' UNION SELECT proname FROM pg_proc p JOIN pg_namespace n"
        " ON n.oid = p.pronamespace WHERE nspname = 'tickq' UNION SELECT typname FROM pg_type t"
        " JOIN pg_namespace n ON n.oid = t.typnamespace WHERE nspname = 'tickq'").fetchall()}
    problems = []
    for where, name in named():
        first = name.split(".")[0]
        if first in objects or name in OTHER_NAMES or _module(name):
            continue
        problems.append(f"{where}: tickq.{name}")
    assert not problems, "\n".join(sorted(set(problems)))


def _module(name: str) -> bool:
    """tickq.NAME is a module of the package, or an attribute of one."""
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            found = importlib.import_module("tickq." + ".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            if not hasattr(found, attr):
                return False
            found = getattr(found, attr)
        return True
    return False


def test_the_columns_the_docs_name_exist(queue: psycopg.Connection) -> None:
    problems = []
    for table in ("job_kind", "job_run", "job_step"):
        columns = {c for (c,) in queue.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_schema = 'tickq'"
            " AND table_name = %s", (table,)).fetchall()}
        for page in PAGES:
            for column in re.findall(rf"\b{table}\.([a-z_]+)", page.read_text()):
                if column not in columns:
                    problems.append(f"{page.relative_to(REPO)}: {table}.{column}")
    assert not problems, "\n".join(problems)


# ---------------------------------------------------------------- the README


def test_the_readme_is_short_and_its_links_lead_somewhere() -> None:
    readme = REPO / "README.md"
    text = readme.read_text()
    assert len(text.splitlines()) <= 150
    targets = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", text)
    local = [t for t in targets if "://" not in t]
    assert len(local) >= 10
    missing = [t for t in local if not (REPO / t).exists()]
    assert not missing, missing
    assert "make docs" in text and "mkdocs serve" in text
