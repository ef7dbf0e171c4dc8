"""A registry's text read the way the `tickq.registry` tests read it: parsed as registry.toml
of a folder, or its problems (the file's shape; the values are the database's to judge)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tickq.registry import Problem, RegistryError, parse_registry

FILE = "registry.toml"
GOOD = 'command = ["bin/x"]\nevery = "5m"\ntimeout = "1m"\n'  # keys of a valid kind


def parse(text: str, base_dir: Path | None = None):
    return parse_registry(textwrap.dedent(text), FILE, base_dir or Path.cwd())


def problems(text: str, base_dir: Path | None = None) -> list[Problem]:
    with pytest.raises(RegistryError) as info:
        parse(text, base_dir)
    return info.value.problems


def one_problem(text: str, base_dir: Path | None = None) -> Problem:
    found = problems(text, base_dir)
    assert len(found) == 1, [str(p) for p in found]
    return found[0]


def kind(body: str, name: str = "job") -> str:
    """A registry holding one kind `name` with `body` as its keys."""
    return f"[kinds.{name}]\n" + textwrap.dedent(body)
