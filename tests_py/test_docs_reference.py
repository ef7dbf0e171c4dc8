"""The generated reference (docs/reference/, written by docs/gen/reference.py) is what the
generator writes today, and covers what the product has: every key of the registry's JSON
Schema, every command `tickq --help` lists, every metric `tickq metrics` prints.

The sets are read from the product by other means than the generator's (the schema walked
whole, `--help` and `metrics` run as processes) and from the pages' text, so a generator that
leaves something out fails here too."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parent.parent
GEN = REPO / "docs" / "gen"
REFERENCE = REPO / "docs" / "reference"
TICKQ = [sys.executable, "-m", "tickq.cli"]

sys.path.insert(0, str(GEN))
import ref_registry  # noqa: E402
import reference  # noqa: E402


@pytest.fixture(scope="module")
def generated(pg_server_url: str, template_db: str) -> dict[str, str]:
    return reference.pages(pg_server_url, template_db)


def test_the_committed_pages_are_what_the_generator_writes(generated: dict[str, str]) -> None:
    stale = [name for name, text in generated.items()
             if not (REFERENCE / name).exists() or (REFERENCE / name).read_text() != text]
    assert not stale, (f"docs/reference/{', '.join(stale)} differ from their sources: "
                       "run `make docs-reference` and commit the pages")


def test_the_generator_writes_every_page_of_the_reference_section(
        generated: dict[str, str]) -> None:
    pages = {p.name for p in REFERENCE.glob("*.md")} - {"index.md"}
    assert set(generated) == pages


# ---------------------------------------------------------------- registry keys


def schema_keys() -> set[tuple[str, str]]:
    """(section, key) of every key the schema allows anywhere, found by walking all of it: the
    properties of an object, named by the path of tables that leads to it."""
    found: set[tuple[str, str]] = set()
    doc = json.loads(ref_registry.SCHEMA.read_text())
    defs = doc["$defs"]
    tables = {"[settings]": doc["properties"]["settings"], "[kinds.NAME]": defs["kind"],
              "[[kinds.NAME.steps]]": defs["step"], "[pools.NAME]": defs["pool"],
              "[agents]": defs["agents"], "[agents.tools.NAME]": defs["tool"]}
    for title, spec in tables.items():
        found |= {(title, k) for k, v in spec["properties"].items() if v.get("not") != {}}
    # Nothing in the schema holds keys that none of those tables names.
    every = set()

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            for key, inner in value.get("properties", {}).items():
                if inner.get("not") != {}:
                    every.add(key)
            for inner in value.values():
                walk(inner)
        elif isinstance(value, list):
            for inner in value:
                walk(inner)

    walk(doc)
    top = set(doc["properties"])  # settings, kinds, agents, pools: the tables themselves
    assert every - top <= {k for _, k in found}, sorted(every - top - {k for _, k in found})
    return found


def page_keys(text: str) -> set[tuple[str, str]]:
    """(section, key) of every row of the tables under each "## `[...]`" heading."""
    found, section = set(), ""
    for line in text.splitlines():
        heading = re.match(r"^## `(\[.*\])`$", line)
        if heading:
            section = heading.group(1)
        row = re.match(r"^\| `([a-z_]+)` \|", line)
        if row and section:
            found.add((section, row.group(1)))
    return found


def test_every_key_of_the_schema_is_in_the_reference() -> None:
    keys = schema_keys()
    assert len(keys) > 60
    assert page_keys((REFERENCE / "registry.md").read_text()) == keys


def test_the_example_registry_names_every_key() -> None:
    assert ref_registry.example_keys() == schema_keys()


# ---------------------------------------------------------------- commands and metrics


def help_commands() -> list[str]:
    """Every command `tickq --help` lists, and the actions `tickq agent --help` and
    `tickq legacy --help` list, as `tickq X [Y]`."""
    def listed(*words: str) -> list[str]:
        out = subprocess.run([*TICKQ, *words, "--help"], capture_output=True, text=True,
                             check=True, env={"PATH": "/usr/bin:/bin", "COLUMNS": "200"}).stdout
        block = out.split("positional arguments:", 1)[1].split("\n\n", 1)[0]
        return [m.group(1) for m in re.finditer(r"^    ([a-z]+)", block, flags=re.MULTILINE)]

    found = [f"tickq {c}" for c in listed()]
    for group in ("agent", "legacy"):
        found += [f"tickq {group} {a}" for a in listed(group)]
    return found


def test_every_command_of_help_is_in_the_reference() -> None:
    commands = help_commands()
    assert {"tickq tick", "tickq agent add", "tickq legacy check"} <= set(commands)
    text = (REFERENCE / "commands.md").read_text()
    headed = set(re.findall(r"^#{2,3} `(tickq [a-z ]+)`$", text, flags=re.MULTILINE))
    assert headed == set(commands)


def test_every_metric_tickq_metrics_prints_is_in_the_reference(
        db_url: str, tmp_path: Path) -> None:
    out = subprocess.run([*TICKQ, "metrics", "--database-url", db_url], cwd=tmp_path,
                         capture_output=True, text=True, check=True).stdout
    printed = set(re.findall(r"^# TYPE (\S+) ", out, flags=re.MULTILINE))
    assert len(printed) > 15
    text = (REFERENCE / "metrics.md").read_text()
    assert set(re.findall(r"^\| `(tickq_[a-z_]+)` \|", text, flags=re.MULTILINE)) == printed
