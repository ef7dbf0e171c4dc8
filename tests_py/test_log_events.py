"""Every event the runner logs round-trips through the JSON log format: its name, its level and
each of its fields come back as written (found by reading the source, so a new event is
covered the day it is added)."""

from __future__ import annotations

import ast
import io
import json
from pathlib import Path

import pytest

from tickq.log import RESERVED, EventLog

SOURCE = Path(__file__).resolve().parent.parent / "python_runner" / "tickq"
LEVELS = {"event": "info", "warning": "warning", "error": "error"}


def logged_events() -> list[tuple[str, str, frozenset[str], str]]:
    """(event name, level, field names, where) of every log call in the runner's modules."""
    found = []
    for path in sorted(SOURCE.rglob("*.py")):
        tree = ast.parse(path.read_text())
        # `fields = {...}` literals spread into a call with **fields: the function's own, else
        # one the module builds elsewhere and passes in under the same name
        shared = _dict_literals(tree)
        for func in ast.walk(tree):
            if not isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            dicts = {**shared, **_dict_literals(func)}
            for call in ast.walk(func):
                if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
                        and call.func.attr in LEVELS and call.args
                        and isinstance(call.args[0], ast.Constant)
                        and isinstance(call.args[0].value, str) and "." in call.args[0].value
                        and ast.unparse(call.func.value).endswith("log")):
                    continue
                names = set()
                for kw in call.keywords:
                    if kw.arg is None and isinstance(kw.value, ast.Name):
                        names |= dicts.get(kw.value.id, set())
                    elif kw.arg not in (None, "level"):
                        names.add(kw.arg)
                found.append((call.args[0].value, LEVELS[call.func.attr], frozenset(names),
                              f"{path.relative_to(SOURCE)}:{call.lineno}"))
    return found


def _dict_literals(node: ast.AST) -> dict[str, set[str]]:
    """{name: its constant keys} of every `name = {...}` under `node`."""
    return {
        t.id: {k.value for k in assign.value.keys if isinstance(k, ast.Constant)}
        for assign in ast.walk(node) if isinstance(assign, ast.Assign)
        and isinstance(assign.value, ast.Dict)
        for t in assign.targets if isinstance(t, ast.Name)
    }


EVENTS = logged_events()


def test_the_source_scan_finds_the_events() -> None:
    names = {name for name, *_ in EVENTS}
    assert {"run.claimed", "run.finished", "alert.sent", "registry.drift", "tick.done"} <= names


@pytest.mark.parametrize(("name", "level", "fields", "where"), EVENTS,
                         ids=[f"{e[0]}@{e[3]}" for e in EVENTS])
def test_each_event_round_trips_through_json(
    name: str, level: str, fields: frozenset[str], where: str
) -> None:
    assert not fields & RESERVED, f"{where}: a field named like the line's own keys"
    out = io.StringIO()
    values = {f: f"value of {f}" for f in sorted(fields)}

    EventLog("json", out).event(name, level=level, **values)

    line = json.loads(out.getvalue())
    assert (line["event"], line["level"]) == (name, level), where
    for field, value in values.items():
        assert value in line.values(), f"{where}: field {field} lost"
    assert len(line) == 3 + len(values), f"{where}: fields collided"


def test_a_colliding_field_is_renamed_not_lost() -> None:
    out = io.StringIO()
    EventLog("json", out).event("alert.sent", event="failing", level="warning")
    line = json.loads(out.getvalue())
    assert (line["event"], line["field_event"]) == ("alert.sent", "failing")
    assert line["level"] == "warning"
