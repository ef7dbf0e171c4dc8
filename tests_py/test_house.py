"""The house's shape, read from the code itself: rooms a reader can hold, arrows that point down.

Python: no module under python_runner/tickq (nor a file of bench/, tests_sql/, tests_py/ or
docs/gen/) over 350 lines, no function of the package over 60, no import circle (imports
inside functions and under TYPE_CHECKING count: they are arrows all the same),
psycopg imported and connected only under tickq/db/, argparse only under tickq/cli/, nothing
imports tickq.cli but tickq/__main__.py and cli itself, and registry/ and host/ import nothing
above them. The SQL files' shape is test_house_sql.py's.

Every assertion names each offender as file:line, so a failure is a to-do list.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SOURCE = REPO / "python_runner"
PACKAGE = SOURCE / "tickq"

MAX_MODULE_LINES = 350  # well under it, not at it: split by responsibility, never by packing
MAX_FUNCTION_LINES = 60

# What registry/ and host/ may import of tickq (the root package, which imports nothing, aside).
MAY_IMPORT = {
    "tickq.registry": ("tickq.registry",),
    "tickq.host": ("tickq.host", "tickq.registry", "tickq.log"),
}


@dataclass(frozen=True)
class Import:
    importer: str  # dotted module name
    target: str  # the tickq module it loads, or the outside top-level name (psycopg, argparse)
    line: int

    def where(self) -> str:
        return f"{_relative(module_paths()[self.importer])}:{self.line}"


def _relative(path: Path) -> str:
    return str(path.relative_to(REPO))


@cache
def module_paths() -> dict[str, Path]:
    """{dotted name: file} of every Python module of the package (a package is its __init__)."""
    modules = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(SOURCE).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


@cache
def tree(module: str) -> ast.Module:
    path = module_paths()[module]
    return ast.parse(path.read_text(), filename=str(path))


def _is_package(module: str) -> bool:
    return module_paths()[module].name == "__init__.py"


def _resolve(name: str) -> str:
    """The tickq module `import name` loads (the longest known prefix), or name's top level."""
    parts = name.split(".")
    if parts[0] != "tickq":
        return parts[0]
    modules = module_paths()
    while parts and ".".join(parts) not in modules:
        parts.pop()
    return ".".join(parts) or "tickq"


def _imports_of(module: str, code: ast.Module | None = None) -> Iterator[Import]:
    """Every import statement of `module` (or of `code`, read as if it were `module`),
    wherever it stands (function bodies included)."""
    modules = module_paths()
    for node in ast.walk(tree(module) if code is None else code):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield Import(module, _resolve(alias.name), node.lineno)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".")
                if not _is_package(module):
                    base.pop()
                base = base[: len(base) - (node.level - 1)]
                source = ".".join([*base, *([node.module] if node.module else [])])
            else:
                source = node.module or ""
            for alias in node.names:
                # `from P import n` loads module P.n when there is one, else takes n from P.
                candidate = f"{source}.{alias.name}"
                target = candidate if candidate in modules else _resolve(source)
                yield Import(module, target, node.lineno)


@cache
def all_imports() -> tuple[Import, ...]:
    return tuple(imp for module in module_paths() for imp in _imports_of(module))


def _inside(module: str, room: str) -> bool:
    return module == room or module.startswith(room + ".")


def _fail(what: str, offenders: list[str]) -> None:
    """Fail with the list of offenders alone (a traceback of this file would hide it)."""
    if offenders:
        pytest.fail(f"{what} ({len(offenders)}):\n  " + "\n  ".join(offenders), pytrace=False)


# ---------------------------------------------------------------- sizes


def test_no_module_is_over_350_lines() -> None:
    scripts = sorted(path for folder in ("bench", "tests_sql", "tests_py", "docs/gen")
                     for path in (REPO / folder).glob("*.py"))
    offenders = []
    for path in [*module_paths().values(), *scripts]:
        lines = len(path.read_text().splitlines())
        if lines > MAX_MODULE_LINES:
            offenders.append(f"{_relative(path)}:1: {lines} lines")
    _fail(f"modules over {MAX_MODULE_LINES} lines", offenders)


def test_no_function_is_over_60_lines() -> None:
    offenders = []
    for module, path in module_paths().items():
        for node in ast.walk(tree(module)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = node.end_lineno - node.lineno + 1
                if lines > MAX_FUNCTION_LINES:
                    offenders.append(f"{_relative(path)}:{node.lineno}: {node.name} {lines} lines")
    _fail(f"functions over {MAX_FUNCTION_LINES} lines", offenders)


# ---------------------------------------------------------------- arrows


def _cycles(edges: dict[str, dict[str, int]]) -> list[list[str]]:
    """The strongly connected components of more than one module, or of one that imports itself
    (Tarjan's algorithm, iterative: the graph is small but recursion depth is not a promise)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    counter = 0
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, {})))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1 or node in edges.get(node, {}):
                        found.append(sorted(component))
    return found


def test_no_import_circle() -> None:
    edges: dict[str, dict[str, int]] = {module: {} for module in module_paths()}
    for imp in all_imports():
        if imp.target in edges and imp.target != imp.importer:
            edges[imp.importer].setdefault(imp.target, imp.line)
    offenders = []
    for component in _cycles(edges):
        members = set(component)
        arrows = [
            f"{_relative(module_paths()[a])}:{line}: {a} -> {b}"
            for a in component for b, line in sorted(edges[a].items()) if b in members
        ]
        offenders.append("circle of " + ", ".join(component) + ":\n    " + "\n    ".join(arrows))
    _fail("import circles", offenders)


def _psycopg_names(code: ast.Module) -> tuple[set[str], set[str]]:
    """The names `code` binds to psycopg itself (or a connection class), and bare names
    bound to a psycopg connect function."""
    holders, connects = set(), set()
    for node in ast.walk(code):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "psycopg":
                    holders.add(alias.asname or alias.name.split(".")[0])
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "psycopg":
            for alias in node.names:
                name = alias.asname or alias.name
                (connects if alias.name == "connect" else holders).add(name)
    return holders, connects


def _psycopg_connects(code: ast.Module) -> Iterator[int]:
    """The lines of `code` that call psycopg's connect (also `psycopg.Connection.connect`)."""
    holders, connects = _psycopg_names(code)
    for node in ast.walk(code):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Name) and func.id in connects:
            yield node.lineno
        elif isinstance(func, ast.Attribute) and func.attr == "connect":
            base = func.value
            while isinstance(base, ast.Attribute):
                base = base.value
            if isinstance(base, ast.Name) and base.id in holders:
                yield node.lineno


def test_psycopg_is_imported_and_connected_only_under_db() -> None:
    offenders = [
        f"{imp.where()}: imports psycopg" for imp in all_imports()
        if imp.target == "psycopg" and not _inside(imp.importer, "tickq.db")
    ]
    for module, path in module_paths().items():
        if not _inside(module, "tickq.db"):
            offenders += [f"{_relative(path)}:{line}: calls psycopg's connect"
                          for line in _psycopg_connects(tree(module))]
    _fail("psycopg outside tickq/db/", offenders)


def _raw_connects(code: ast.Module) -> Iterator[int]:
    """The lines of `code` that open a connection around the door: `db.connect(...)`, or the
    `connect` of tickq.db / tickq.db.connect imported by name."""
    names = {alias.asname or alias.name for node in ast.walk(code)
             if isinstance(node, ast.ImportFrom) and node.module in ("tickq.db", "tickq.db.connect")
             for alias in node.names if alias.name == "connect"}
    for node in ast.walk(code):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if (isinstance(func, ast.Name) and func.id in names) or (
                isinstance(func, ast.Attribute) and func.attr == "connect"
                and isinstance(func.value, ast.Name) and func.value.id == "db"):
            yield node.lineno


def test_connections_open_only_through_the_door() -> None:
    """Outside tickq/db/, a connection comes from db.api.session (a command's) or db.connect.Link
    (a tick's, a chain's, an agent run's): both give one-line failures and the timeouts."""
    offenders = []
    for module, path in module_paths().items():
        if not _inside(module, "tickq.db"):
            offenders += [f"{_relative(path)}:{line}: opens a connection around the door"
                          for line in _raw_connects(tree(module))]
    _fail("connections opened outside tickq/db/", offenders)


def test_the_door_check_sees_a_raw_connect() -> None:
    code = ast.parse("from tickq import db\nfrom tickq.db.connect import connect as c\n"
                     "db.connect('x')\nc('y')\nsession.connect('z')\n")
    assert list(_raw_connects(code)) == [3, 4]


def test_argparse_is_imported_only_under_cli() -> None:
    offenders = [
        f"{imp.where()}: imports argparse" for imp in all_imports()
        if imp.target == "argparse" and not _inside(imp.importer, "tickq.cli")
    ]
    _fail("argparse outside tickq/cli/", offenders)


def test_nothing_imports_cli() -> None:
    offenders = [
        f"{imp.where()}: imports {imp.target}" for imp in all_imports()
        if _inside(imp.target, "tickq.cli")
        and not _inside(imp.importer, "tickq.cli") and imp.importer != "tickq.__main__"
    ]
    _fail("imports of tickq.cli from outside it", offenders)


def test_registry_and_host_import_nothing_above_them() -> None:
    offenders = []
    for room, allowed in MAY_IMPORT.items():
        for imp in all_imports():
            if (_inside(imp.importer, room) and imp.target.startswith("tickq")
                    and imp.target != "tickq"
                    and not any(_inside(imp.target, ok) for ok in allowed)):
                offenders.append(f"{imp.where()}: {room} imports {imp.target}")
    _fail("registry/ or host/ importing a room above them", offenders)


def test_the_checks_see_what_they_look_for() -> None:
    """The readers above find what is there: a check that finds nothing proves nothing."""
    modules = module_paths()
    assert {"tickq.cli.main", "tickq.db.connect", "tickq.__main__"} <= modules.keys()
    assert any(i.target == "psycopg" for i in all_imports() if _inside(i.importer, "tickq.db"))
    assert any(i.target == "argparse" for i in all_imports() if _inside(i.importer, "tickq.cli"))
    assert any(i.importer == "tickq.__main__" and i.target == "tickq.cli.main"
               for i in all_imports())
    assert list(_psycopg_connects(tree("tickq.db.connect"))), "psycopg.connect in db/connect.py"
    calls = ast.parse(
        "import psycopg as pg\nfrom psycopg import connect as c, Connection\n"
        "def f():\n    pg.connect('')\n    c('')\n    Connection.connect('')\n"
        "    db.connect('')\n")
    assert list(_psycopg_connects(calls)) == [4, 5, 6]
    inner = ast.parse("def f():\n    from . import shell\n    from ..db import connect\n"
                      "    import tickq.cli.main\n")
    assert [(i.target, i.line) for i in _imports_of("tickq.legacy.importing", inner)] == [
        ("tickq.legacy.shell", 2), ("tickq.db.connect", 3), ("tickq.cli.main", 4)]
    assert _cycles({"a": {"b": 1}, "b": {"c": 1}, "c": {"a": 1}, "d": {"a": 1}}) == [
        ["a", "b", "c"]]
    assert _cycles({"a": {"b": 1}, "b": {}}) == []
    assert _resolve("tickq.db.connect.connect") == "tickq.db.connect"

