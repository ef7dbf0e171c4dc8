"""The house's SQL shape, read from the files under sql/ (migrations included: a body is read
where it is written): no file over 400 lines, and no function or procedure of any language (sql
as much as plpgsql) with a body over 100 lines. Split by responsibility, never by packing: the
claim's hot path asks helpers, each one call; the metrics text is one function per family and a
formatter.

Every assertion names each offender as file:line, so a failure is a to-do list.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest
from test_house import REPO, _fail, _relative

from tickq.db import baseline

SQL = REPO / "sql"
MAX_SQL_FILE_LINES = 400
# The baseline is every table of the schema in one file, declarations only (one readable file is
# its point); the bound keeps it from growing: a later change of a table is a migration of its own.
SQL_FILE_EXCEPTIONS = {"migrations/0100_baseline.sql": 700}
MAX_SQL_FUNCTION_LINES = 100
# The simulator's clock keeps a dozen arrays by part (states, digests, where a copied part's runs
# and due times come from) that only its own loop may write in place: a function given and
# giving back the arrays copied them whole at each call (2.7 s of the month of 1,000 cron kinds).
# The bound keeps it from growing; the way down is one array of a part's facts (a composite type).
SQL_FUNCTION_EXCEPTIONS = {"tickq.simulate_window": 155}


@dataclass(frozen=True)
class Function:
    name: str
    language: str  # as its LANGUAGE clause names it, in lower case
    path: Path
    line: int  # of CREATE
    lines: int  # of the body, between its dollar quotes


_CREATE = re.compile(r"\bCREATE\s+(?:OR\s+REPLACE\s+)?(?:FUNCTION|PROCEDURE)\s+"
                     r"((?:\"?\w+\"?\.)?\"?\w+\"?)\s*\(", re.IGNORECASE)
_DOLLAR = re.compile(r"\$([A-Za-z_]\w*)?\$")
_LANGUAGE = re.compile(r"\bLANGUAGE\s+'?(\w+)", re.IGNORECASE)


def _without_comments(text: str) -> str:
    """`text` with `--` comments blanked (same length, same line numbers), so a comment that
    mentions CREATE FUNCTION or a dollar sign is not read as code. Quoted strings outside the
    bodies are short and hold neither here."""
    return re.sub(r"--[^\n]*", lambda m: " " * len(m.group()), text)


def functions_in(path: Path, text: str) -> Iterator[Function]:
    """Every function and procedure `text` creates, in order. A body this reader cannot find
    between dollar quotes (BEGIN ATOMIC, a quoted string) is an error naming it: a rule that
    skips what it cannot read proves nothing."""
    code = _without_comments(text)
    position = 0
    while match := _CREATE.search(code, position):
        name = match.group(1).replace('"', "").lower()
        line = text.count("\n", 0, match.start()) + 1
        opening = _DOLLAR.search(code, match.end())
        following = _CREATE.search(code, match.end())
        closing = -1 if opening is None else text.find(opening.group(), opening.end())
        if opening is None or closing < 0 or (following and following.start() < opening.start()):
            raise ValueError(f"{_relative(path)}:{line}: {name}: no body between dollar quotes")
        after = closing + len(opening.group())
        end = code.find(";", after)
        outside = code[match.start():opening.start()] + code[after:end if end >= 0 else None]
        language = _LANGUAGE.search(outside)
        yield Function(name=name, language=language.group(1).lower() if language else "sql",
                       path=path, line=line,
                       lines=len(text[opening.end():closing].strip("\n").splitlines()))
        position = after


@cache
def sql_functions() -> tuple[Function, ...]:
    return tuple(function for path in sorted(SQL.rglob("*.sql"))
                 for function in functions_in(path, path.read_text()))


def _too_long(functions: tuple[Function, ...]) -> list[str]:
    return [f"{_relative(f.path)}:{f.line}: {f.name} ({f.language}) {f.lines} lines"
            for f in functions
            if f.lines > SQL_FUNCTION_EXCEPTIONS.get(f.name, MAX_SQL_FUNCTION_LINES)]


# What the baseline may say of a function a constraint or trigger names: that it exists (its body
# is an API file's).
_DECLARATION = re.compile(r"CREATE FUNCTION [\w.]+\([^;]*?\)\s*RETURNS \w+\s+LANGUAGE \w+ "
                          r"AS \$\$ (BEGIN RETURN NEW; END|SELECT NULL::boolean) \$\$;")


def _defined(path: Path, text: str) -> list[str]:
    """file:line and name of each function `text` defines but for the baseline's declarations."""
    declared = {text.count("\n", 0, m.start()) + 1 for m in _DECLARATION.finditer(text)
                } if path.name == baseline.BASELINE else set()
    return [f"{_relative(f.path)}:{f.line}: {f.name}" for f in functions_in(path, text)
            if f.line not in declared]


def test_migrations_change_tables_only() -> None:
    """Every function body is in sql/api, re-applied by checksum: a migration defines none, and
    the baseline only declares the functions its constraints and triggers name."""
    _fail("functions defined in a migration (their bodies belong in sql/api)",
          [offender for path in sorted((SQL / "migrations").glob("*.sql"))
           for offender in _defined(path, path.read_text())])


def test_no_sql_file_is_over_400_lines() -> None:
    offenders = []
    for path in sorted(SQL.rglob("*.sql")):
        lines = len(path.read_text().splitlines())
        if lines > SQL_FILE_EXCEPTIONS.get(path.relative_to(SQL).as_posix(), MAX_SQL_FILE_LINES):
            offenders.append(f"{_relative(path)}:1: {lines} lines")
    _fail(f"SQL files over {MAX_SQL_FILE_LINES} lines", offenders)


def test_no_sql_function_is_over_100_lines() -> None:
    _fail(f"SQL functions of any language over {MAX_SQL_FUNCTION_LINES} lines",
          _too_long(sql_functions()))


def test_the_function_reader_sees_what_it_looks_for() -> None:
    """Both languages are read, in the API files and the migrations, and a long body of either is
    an offender: a check that finds nothing proves nothing."""
    api = {f.name: f for f in sql_functions() if f.path.parent.name == "api"}
    assert api["tickq.metrics_text"].language == "sql" and api["tickq.metrics_text"].lines > 10
    assert api["tickq.claim_jobs"].language == "plpgsql" and api["tickq.claim_jobs"].lines > 10
    assert api["tickq.simulate_window"].language == "plpgsql"  # a procedure
    migrated = {f.language for f in sql_functions() if f.path.parent.name == "migrations"}
    assert {"sql", "plpgsql"} <= migrated
    body = "\n".join(["    SELECT 1"] * 101)
    sample = ("-- CREATE FUNCTION tickq.commented() AS $$\n"
              f"CREATE OR REPLACE FUNCTION tickq.long(\n    p integer\n) RETURNS integer\n"
              f"LANGUAGE sql\nAS $$\n{body}\n$$;\n"
              "CREATE PROCEDURE tickq.short() LANGUAGE plpgsql AS $b$ BEGIN END $b$;\n")
    where = SQL / "api" / "sample.sql"
    found = tuple(functions_in(where, sample))
    assert [(f.name, f.language, f.line, f.lines) for f in found] == [
        ("tickq.long", "sql", 2, 101), ("tickq.short", "plpgsql", 109, 1)]
    assert _too_long(found) == ["sql/api/sample.sql:2: tickq.long (sql) 101 lines"]
    declared = ("CREATE FUNCTION tickq.f(p_a text DEFAULT now()) RETURNS trigger\n"
                "LANGUAGE plpgsql AS $$ BEGIN RETURN NEW; END $$;\n"
                "CREATE FUNCTION tickq.g() RETURNS int LANGUAGE sql AS $$ SELECT 1 $$;\n")
    assert _defined(SQL / "migrations" / baseline.BASELINE, declared) == [
        "sql/migrations/0100_baseline.sql:3: tickq.g"]
    assert len(_defined(SQL / "migrations" / "0101_x.sql", declared)) == 2
    atomic = "CREATE FUNCTION tickq.atomic() RETURNS integer\nBEGIN ATOMIC SELECT 1; END;\n"
    with pytest.raises(ValueError, match=r"sample\.sql:1: tickq\.atomic: no body"):
        list(functions_in(where, atomic + sample))
