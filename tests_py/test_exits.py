"""The one exit map (tickq.db.errors.exit_of), the command line's database door, and the one
duration formatter for people."""

from __future__ import annotations

import ast
from datetime import timedelta
from pathlib import Path

import psycopg
import pytest

from tickq.db.api import operator, session
from tickq.db.errors import (
    ClaimRefused,
    DatabaseUnavailable,
    DatabaseUnreachable,
    InvalidInput,
    MigrationError,
    NoAnswer,
    RegistryRefused,
    ScratchUnavailable,
    exit_of,
)
from tickq.registry import Problem, RegistryError
from tickq.registry.durations import coarse_duration, human_duration

PACKAGE = Path(__file__).resolve().parent.parent / "python_runner" / "tickq"


def test_each_failure_class_has_its_status_and_one_line() -> None:
    problem = Problem(Path("r.toml"), "k", "every", "must be at least 1m")
    assert exit_of(NoAnswer("no agent 'x'")) == (1, ["no agent 'x'"])
    assert exit_of(ClaimRefused("TQ005", "no free slot")) == (1, ["no free slot"])
    assert exit_of(InvalidInput("--hours must be positive")) == (2, ["--hours must be positive"])
    assert exit_of(DatabaseUnreachable("cannot reach the database: x")) == (
        3, ["cannot reach the database: x"])
    assert exit_of(MigrationError("0003_x.sql: boom")) == (
        3, ["migration failed: 0003_x.sql: boom"])
    assert exit_of(DatabaseUnavailable("gone")) == (3, ["lost the database: gone"])
    assert exit_of(ScratchUnavailable("permission denied to create database")) == (
        4, ["cannot create a scratch database for the simulation: permission denied to create "
            "database"])
    for exc in (RegistryRefused([problem]), RegistryError([problem])):
        assert exit_of(exc) == (2, [str(problem), "invalid registry: 1 problem(s)"])
    assert exit_of(PermissionError(13, "Permission denied", "/x/status.html")) == (
        2, ["/x/status.html: Permission denied"])
    assert exit_of(ValueError("a bug")) is None  # a bug keeps its traceback


def test_database_refusals_map_by_sqlstate(conn: psycopg.Connection) -> None:
    with pytest.raises(NoAnswer) as unknown:  # TQ003 through the door: a "no"
        operator.resume_kind(conn, "no_such_kind")
    assert unknown.value.sqlstate == "TQ003"
    assert exit_of(unknown.value) == (1, ['no kind "no_such_kind" in the registry'])
    cases = {
        "SELECT tickq.resume_kind('no_such_kind')": (1, 'no kind "no_such_kind" in the registry'),
        "SELECT 'x'::integer": (2, 'invalid input syntax for type integer: "x"'),
        "SELECT * FROM no_such_table": (
            3, 'the database refused: relation "no_such_table" does not exist (SQLSTATE 42P01)'),
    }
    for statement, (status, line) in cases.items():
        with pytest.raises(psycopg.Error) as raised:
            conn.execute(statement)
        assert exit_of(raised.value) == (status, [line]), statement


def test_an_unreachable_or_invalid_url_is_a_failure_of_its_own() -> None:
    with pytest.raises(InvalidInput, match="not a PostgreSQL URL"):
        session.connect("not a url at all ===")
    with pytest.raises(DatabaseUnreachable, match="^cannot reach the database: "):
        session.connect("postgresql://nobody@127.0.0.1:1/none")


def test_the_command_line_and_the_page_never_touch_psycopg() -> None:
    for room in ("cli", "page"):
        for path in (PACKAGE / room).rglob("*.py"):
            tree = ast.parse(path.read_text())
            for node in ast.walk(tree):
                if isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom):
                    names = [node.module or ""]
                else:
                    continue
                assert not any(n.split(".")[0] == "psycopg" for n in names), (path, names)


def test_nothing_imports_the_command_line() -> None:
    """Only the entry points do: tickq/cli itself (its options/ too) and `python -m tickq`."""
    for path in PACKAGE.rglob("*.py"):
        if path.relative_to(PACKAGE).parts[0] == "cli" or path == PACKAGE / "__main__.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                assert not (node.module or "").startswith("tickq.cli"), path
            elif isinstance(node, ast.Import):
                assert not any(a.name.startswith("tickq.cli") for a in node.names), path


@pytest.mark.parametrize(("value", "text"), [
    (None, "-"), (timedelta(seconds=0.42), "0.4s"), (timedelta(seconds=90), "1m30s"),
    (5400.9, "1h30m"), (86_400, "1d"),
])
def test_human_duration(value: timedelta | float | None, text: str) -> None:
    assert human_duration(value) == text


def test_human_duration_without_tenths() -> None:
    assert human_duration(0.42, tenths=False) == "0s"
    assert human_duration(timedelta(minutes=5), tenths=False) == "5m"


@pytest.mark.parametrize(("seconds", "text"), [
    (0, "0s"), (45.9, "45s"), (60, "1m"), (209, "3m"), (3_600, "1h"), (4_859, "1h20m"),
    (86_400, "1d"), (183_599, "2d2h"), (180_000, "2d2h"),
])
def test_coarse_duration(seconds: float, text: str) -> None:
    assert coarse_duration(seconds) == text
