"""registry.schema.json: a valid JSON Schema, shipped with the package, that an editor's checker
(the taplo CLI, which Even Better TOML embeds) and tickq's loader read alike: every example
registry passes both, and each shape mistake below is refused by both, naming the key."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tickq.registry import RegistryError, load_registry, parse_registry
from tickq.registry.shape import schema, shape_problems

REPO = Path(__file__).resolve().parent.parent
SCHEMA = REPO / "python_runner" / "tickq" / "registry" / "registry.schema.json"
EXAMPLES = sorted((REPO / "examples").rglob("*.toml"))


def _taplo_program() -> str:
    program = Path(sys.executable).with_name("taplo")
    found = str(program) if program.exists() else shutil.which("taplo")
    assert found, "the taplo CLI (pip install taplo, a dev dependency) is not installed"
    return found


def taplo(file: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([_taplo_program(), "check", "--schema", SCHEMA.as_uri(), str(file)],
                          cwd=file.parent, capture_output=True, text=True, timeout=60)


def test_the_schema_is_valid_draft_2020_12_and_is_what_the_loader_reads() -> None:
    jsonschema.Draft202012Validator.check_schema(schema())
    assert schema()["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert json.loads(SCHEMA.read_text()) == schema()


def test_the_schema_ships_as_package_data() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())
    assert "registry/registry.schema.json" in project["tool"]["setuptools"]["package-data"]["tickq"]
    assert "jsonschema" in " ".join(project["project"]["dependencies"])


def _subschemas(node: Any) -> Iterator[dict[str, Any]]:
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from _subschemas(value)
    elif isinstance(node, list):
        for value in node:
            yield from _subschemas(value)


def test_value_bounds_are_left_to_the_database() -> None:
    # Bounds of numbers and durations are tickq.registry_limits'; the schema says shape only.
    for sub in _subschemas(schema()):
        for keyword in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "enum",
                        "const"):
            assert keyword not in sub, sub


def test_each_message_belongs_to_a_keyword_of_its_schema() -> None:
    for sub in _subschemas(schema()):
        for key in sub.get("x-message", {}):
            keyword = key.partition(":")[0]
            assert keyword == "*" or keyword in sub, (key, sub)


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: str(p.relative_to(REPO)))
def test_every_example_registry_passes_taplo_and_the_loader(example: Path) -> None:
    result = taplo(example)
    assert result.returncode == 0, result.stdout + result.stderr
    load_registry(example)


# A shape mistake each: (registry, the key taplo names, tickq's (kind, key)).
MISTAKES = {
    "mistyped kind key": ('[kinds.a]\ncommand = ["x"]\nevery = "5m"\ntimeout = "1m"\nretry = 1\n',
                          "retry", ("a", "retry")),
    "mistyped settings key": ('[settings]\nslot = 3\n', "slot", (None, "settings.slot")),
    "mistyped step key": ('[kinds.a]\nevery = "5m"\n[[kinds.a.steps]]\nname = "s"\n'
                          'command = ["x"]\ntimeout = "1m"\nshell = "sh"\n', "shell",
                          ("a", "steps[1].shell")),
    "mistyped agents key": ('[agents]\nbase_url = "http://127.0.0.1/v1"\nmodel = "m"\n'
                            'max_turn = 3\n', "max_turn", (None, "agents.max_turn")),
    "a duration without its unit": ('[kinds.a]\ncommand = ["x"]\nevery = "300"\n'
                                    'timeout = "1m"\n', "300", ("a", "every")),
    "a command as one string": ('[kinds.a]\ncommand = "bin/x --y"\nevery = "5m"\n'
                                'timeout = "1m"\n', "bin/x --y", ("a", "command")),
    "on with every": ('[kinds.a]\ncommand = ["x"]\nevery = "5m"\non = ["mon"]\n'
                      'timeout = "1m"\n', "mon", ("a", "on")),
    "a key in the file": ('[agents]\nbase_url = "http://127.0.0.1/v1"\nmodel = "m"\n'
                          'api_key = "sk-1"\n', "sk-1", (None, "agents.api_key")),
}


@pytest.mark.parametrize("case", MISTAKES)
def test_a_shape_mistake_is_refused_by_taplo_and_the_loader(tmp_path: Path, case: str) -> None:
    text, named, (kind, key) = MISTAKES[case]
    path = tmp_path / "registry.toml"
    path.write_text(text)
    result = taplo(path)
    assert result.returncode == 1, result.stdout + result.stderr
    assert named in result.stdout + result.stderr
    with pytest.raises(RegistryError) as info:
        load_registry(path)
    assert [(p.kind, p.key) for p in info.value.problems] == [(kind, key)]


def test_the_loader_reports_the_schemas_problems_in_one_line_each() -> None:
    doc = tomllib.loads(textwrap.dedent("""
        colour = 1
        [kinds.a]
        command = ["x", 3]
        every = "5m"
        timeout = "1m"
        env = { "A=B" = "x" }
    """))
    assert [str(p) for p in shape_problems(doc, "r.toml")] == [
        'r.toml: key "colour": unknown key; expected one of settings, kinds, agents, pools',
        'r.toml: kind "a", key "command": command[1] must be a non-empty string, got 3',
        "r.toml: kind \"a\", key \"env\": env name 'A=B' must be non-empty, without '=' or NUL",
    ]
    with pytest.raises(RegistryError):
        parse_registry("colour = 1\n", "r.toml", Path.cwd())


# ---------------------------------------------------------------- texts that passed before

LOAD = """
import sys
from tickq.registry import RegistryError, load_registry
try:
    load_registry(sys.argv[1])
    print("ok", "jsonschema" in sys.modules)
except RegistryError as e:
    print("refused", "jsonschema" in sys.modules, len(e.problems))
"""


def _load(path: Path, cache: Path) -> str:
    env = {**os.environ, "TICKQ_CACHE_DIR": str(cache),
           "PYTHONPATH": str(REPO / "python_runner")}
    result = subprocess.run([sys.executable, "-c", LOAD, str(path)], env=env,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_a_text_that_passed_is_not_checked_again_until_it_changes(tmp_path: Path) -> None:
    cache, path = tmp_path / "cache", tmp_path / "registry.toml"
    path.write_text('[kinds.a]\ncommand = ["x"]\nevery = "5m"\ntimeout = "1m"\n')
    assert _load(path, cache) == "ok True"
    assert _load(path, cache) == "ok False"  # a tick that reads the same file imports none of it
    path.write_text(path.read_text() + "retries = 1\n")
    assert _load(path, cache) == "ok True"


def test_a_text_with_problems_is_checked_every_time(tmp_path: Path) -> None:
    cache, path = tmp_path / "cache", tmp_path / "registry.toml"
    path.write_text('[kinds.a]\ncommand = "x"\nevery = "5m"\ntimeout = "1m"\nretry = 1\n')
    assert _load(path, cache) == "refused True 2"
    assert _load(path, cache) == "refused True 2"


def test_a_cache_others_may_write_is_not_believed(tmp_path: Path) -> None:
    cache, path = tmp_path / "cache", tmp_path / "registry.toml"
    path.write_text('[kinds.a]\ncommand = ["x"]\nevery = "5m"\ntimeout = "1m"\n')
    assert _load(path, cache) == "ok True"
    [folder] = cache.iterdir()
    [file] = folder.iterdir()
    assert folder.stat().st_mode & 0o077 == 0 and file.stat().st_mode & 0o077 == 0
    assert _load(path, cache) == "ok False"
    file.chmod(0o666)  # anyone could have written what it says the text parsed to
    assert _load(path, cache) == "ok True"
    file.chmod(0o600)
    folder.chmod(0o777)  # anyone could have put it there
    assert _load(path, cache) == "ok True"


PARSED = """
import json, sys
from tickq.registry import load_registry
registry = load_registry(sys.argv[1])
print(json.dumps(["tomllib" in sys.modules, registry.kinds["a"].at, registry.to_sync_json()]))
"""


def test_a_text_that_passed_is_not_parsed_again_and_reads_the_same(tmp_path: Path) -> None:
    """The second load of a text takes what the first parsed (no TOML parser imported), with
    the same model: clock times, numbers, text and the kinds in file order."""
    cache, path = tmp_path / "cache", tmp_path / "registry.toml"
    path.write_text(
        '[settings]\ncapacity_margin = 0.5\n\n[kinds.b]\ncommand = ["x", "é \\u00e9"]\n'
        'at = [06:00:00, "18:30"]\ntimeout = "1m"\n\n[kinds.a]\ncommand = ["y"]\nat = 07:15:00\n'
        'timeout = "60s"\nretries = 2\n')
    env = {**os.environ, "TICKQ_CACHE_DIR": str(cache), "PYTHONPATH": str(REPO / "python_runner")}
    runs = [json.loads(subprocess.run(
        [sys.executable, "-c", PARSED, str(path)], env=env, capture_output=True, text=True,
        timeout=60, check=True).stdout) for _ in range(2)]
    assert [r[0] for r in runs] == [True, False]
    assert runs[0][1:] == runs[1][1:] and runs[1][1] == ["07:15"]
    assert list(runs[1][2]["kinds"]) == ["b", "a"]
    assert runs[1][2]["kinds"]["b"]["at"] == ["06:00", "18:30"]


def test_a_text_holding_a_secret_is_parsed_every_time_and_no_copy_is_kept(tmp_path: Path) -> None:
    cache, path = tmp_path / "cache", tmp_path / "registry.toml"
    path.write_text('[kinds.a]\ncommand = ["x"]\nevery = "5m"\ntimeout = "1m"\n'
                    'env = { TOKEN = "hunter2" }\n')
    assert [_load(path, cache) for _ in range(2)] == ["ok True", "ok True"]
    assert not any("hunter2" in f.read_text() for f in cache.rglob("*") if f.is_file())


def test_the_schemas_digest_is_part_of_the_key() -> None:
    from tickq.registry import shape_cache

    text = '[kinds.a]\ncommand = ["x"]\n'
    assert shape_cache.digest(text, "{}") != shape_cache.digest(text, '{"type": "object"}')
    assert shape_cache.digest(text, "{}") != shape_cache.digest(text + " ", "{}")


def test_without_a_cache_folder_every_text_is_checked(tmp_path: Path) -> None:
    path = tmp_path / "registry.toml"
    path.write_text('[kinds.a]\ncommand = ["x"]\nevery = "5m"\ntimeout = "1m"\n')
    for _ in range(2):
        assert _load(path, Path("relative-cache")) == "ok True"
    assert not (tmp_path / "relative-cache").exists() and not Path("relative-cache").exists()


# ---------------------------------------------------------------- the editor's verdict is tickq's

# Values for each key, right and wrong in shape (never a float for a whole number: JSON Schema
# counts 1.0 as an integer where tickq does not, see shape._is_integer).
_VALUES = {
    "command": ['["x"]', '"x"', "[]", '["x", 1]'], "every": ['"5m"', '"5"', "300"],
    "offset": ['"1m"'], "at": ['"06:00"', '["06:00", 18:00:00]', "[6]"], "on": ['["mon"]', '"mon"'],
    "timezone": ['"UTC"', "1"], "timeout": ['"1m"', '"1 m"'], "priority": ['"low"', "1"],
    "retries": ["1", "true"], "enabled": ["false", '"no"'], "env": ['{ A = "b" }', "{ A = 1 }"],
    "irreversible": ["true"], "legacy": ['"x"', "1"], "resume": ["true"],
    "steps": ['[{ name = "s", command = ["x"], timeout = "1m" }]', "[]", '[{ name = "s" }]',
              "[1]"],
    "colour": ["1"],
}
_SETTINGS = {"slots": ["3", '"3"'], "tick": ['"5m"', '"5"'], "capacity_margin": ["0.5", '"x"'],
             "alert_command": ['["a"]', '"a"'], "slot": ["1"]}


@st.composite
def _registries(draw: st.DrawFn) -> str:
    """A right kind with up to two keys set (or dropped), rightly or wrongly; maybe a setting."""
    kind = {"command": '["x"]', "every": '"5m"', "timeout": '"1m"'}
    for key in draw(st.lists(st.sampled_from(sorted(_VALUES)), unique=True, max_size=2)):
        kind[key] = draw(st.sampled_from([*_VALUES[key], None]))
    lines = ["[kinds.a]"] + [f"{k} = {v}" for k, v in kind.items() if v is not None]
    for key in draw(st.lists(st.sampled_from(sorted(_SETTINGS)), unique=True, max_size=1)):
        lines = ["[settings]", f"{key} = {draw(st.sampled_from(_SETTINGS[key]))}", *lines]
    return "\n".join(lines) + "\n"


@settings(max_examples=6, deadline=None)
@given(st.lists(_registries(), min_size=25, max_size=25))
def test_taplo_and_the_loader_refuse_the_same_registries(texts: list[str]) -> None:
    # One taplo run per file, judged by its exit status: taplo's closing "schema validation
    # failed" line is not printed for every kind of failure (a oneOf error prints only its
    # "error:" line), so reading file names out of one run over many files missed some.
    with tempfile.TemporaryDirectory() as folder:
        for i, text in enumerate(texts):
            path = Path(folder) / f"r{i}.toml"
            path.write_text(text)
            result = subprocess.run([str(_taplo_program()), "check", "--colors", "never",
                                     "--schema", SCHEMA.as_uri(), str(path)],
                                    capture_output=True, text=True, timeout=60)
            flagged = result.returncode != 0
            if flagged:
                assert "error:" in result.stderr + result.stdout, result.stderr
            ours = bool(shape_problems(_as_loaded(text), path.name))
            assert ours == flagged, (text, result.stderr)


def _as_loaded(text: str) -> dict[str, Any]:
    """The TOML as parse_registry hands it to the schema (local times as "HH:MM")."""
    doc = tomllib.loads(text)
    at = doc.get("kinds", {}).get("a", {}).get("at")
    if isinstance(at, list):
        doc["kinds"]["a"]["at"] = [t.strftime("%H:%M") if not isinstance(t, str | int) else t
                                   for t in at]
    return doc
