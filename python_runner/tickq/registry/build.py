"""The registry's TOML, its shape already checked (tickq.registry.shape), -> the immutable model.

What the schema cannot say of the file's shape is said here, in short functions: a tool's
parameters are a JSON schema object, report_html and metrics_file name a file in a folder that
exists. A chain's timeout defaults to the sum of its steps'; whether a timeout given covers
them, and whether step names repeat, are value rules: the database's (sql/api/08_chain.sql,
22_kinds.sql). A `cwd` is only made absolute: a folder
that is missing here (an unmounted disk, another host's layout) is a run-time problem of its
own kind, like a missing program (tickq.host.programs), never a reason to stop every other
kind. Keys the shape check refused are left at their defaults, so that every other problem is
still found; the caller raises when any problem was found.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

from tickq.registry.durations import parse_duration
from tickq.registry.model import (
    Agents,
    AgentTool,
    Kind,
    Problem,
    Registry,
    Settings,
    Step,
    default_agent_runner,
)
from tickq.registry.shape import type_name

_DURATIONS = frozenset({
    "tick", "stale_after", "lease_margin", "alert_timeout", "retry_base", "retry_max",
    "housekeeping_every", "housekeeping_timeout", "retention", "db_connect_timeout",
    "db_statement_timeout", "db_lock_timeout", "ping_timeout", "every", "offset", "timeout",
    "deliver_timeout", "request_timeout", "catch_up",
})  # fmt: skip
_TUPLES = frozenset({"alert_command", "command", "runner", "deliver", "at", "on", "days", "months",
                     "pools"})


class _Builder:
    def __init__(self, file: str, base_dir: Path, problems: list[Problem]) -> None:
        self.file = file
        self.base_dir = base_dir
        self.problems = problems
        self.refused = {(p.kind, p.key) for p in problems}

    def report(self, kind: str | None, key: str, message: str) -> None:
        self.problems.append(Problem(self.file, kind, key, message))
        self.refused.add((kind, key))

    def values(self, table: Any, kind: str | None, prefix: str = "") -> dict[str, Any]:
        """`table`'s values the shape check let through, converted: durations to seconds,
        arrays to tuples, env tables to read-only mappings, folders to absolute paths."""
        if not isinstance(table, dict) or (kind, prefix.rstrip(".") or None) in self.refused:
            return {}
        out = {}
        for key, value in table.items():
            if (kind, prefix + key) in self.refused:
                continue
            if key in _DURATIONS:
                value = parse_duration(value)
            elif key in _TUPLES:
                value = tuple(value) if isinstance(value, list) else (value,)
            elif key == "env":
                value = MappingProxyType(dict(value))
            elif key == "cwd":
                value = (self.base_dir / value).resolve()
            elif key in ("report_html", "metrics_file"):
                value = self.report_file(kind, prefix + key, value)
            out[key] = value
        return out

    def report_file(self, kind: str | None, key: str, value: str) -> Path | None:
        path = (self.base_dir / value).resolve()
        if not path.parent.is_dir():
            self.report(kind, key, f"folder does not exist: {path.parent}")
        elif path.is_dir():
            self.report(kind, key, f"is a folder, not a file: {path}")
        else:
            return path
        return None

    def kind(self, name: str, table: dict[str, Any]) -> Kind:
        got = self.values(table, name)
        steps = self.steps(name, table.get("steps")) if "steps" in table else ()
        if steps:
            got.setdefault("timeout", sum(s.timeout for s in steps))
        fields = {k: v for k, v in got.items() if k != "steps"}
        return Kind(name=name, **{"command": (), "timeout": 0, **fields}, steps=steps)

    def steps(self, kind: str, items: Any) -> tuple[Step, ...]:
        if not isinstance(items, list) or (kind, "steps") in self.refused:
            return ()
        return tuple(Step(**{"name": "", "command": (), "timeout": 0,
                             **self.values(item, kind, f"steps[{i + 1}].")})
                     for i, item in enumerate(items))

    def agents(self, table: dict[str, Any]) -> Agents:
        got = self.values(table, None, "agents.")
        tools = got.pop("tools", {})
        got.pop("api_key", None)
        built = {name: self.tool(name, t) for name, t in tools.items()} if isinstance(
            tools, dict) else {}
        got["base_url"] = got.get("base_url", "").rstrip("/")
        return Agents(**{"model": "", "runner": default_agent_runner(), **got},
                      tools=MappingProxyType(built))

    def tool(self, name: str, table: Any) -> AgentTool:
        where = f"agents.tools.{name}"
        got = self.values(table, None, where + ".")
        if "parameters" in got:
            got["parameters_json"] = self.parameters(where, got.pop("parameters"))
        return AgentTool(name=name, **{"command": (), "description": "",
                                       "parameters_json": '{"properties":{},"type":"object"}',
                                       **got})

    def parameters(self, where: str, value: Any) -> str:
        """A tool's JSON schema, from a TOML table or a JSON string, as canonical JSON text."""
        key = where + ".parameters"
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except json.JSONDecodeError as e:
                self.report(None, key, f"parameters is not valid JSON: {e}")
                return ""
        if not isinstance(value, dict) or value.get("type") != "object":
            self.report(None, key, 'parameters must be a JSON schema object with "type" = "object"')
            return ""
        try:
            return json.dumps(value, sort_keys=True, separators=(",", ":"), default=_json_only)
        except TypeError as e:
            self.report(None, key, str(e))
            return ""


def _json_only(value: Any) -> Any:
    raise TypeError(f"parameters must hold JSON values only, got {type_name(value)}")


def build_registry(doc: Mapping[str, Any], file: str, base_dir: Path,
                   problems: list[Problem]) -> Registry:
    """The model of `doc`; every problem found on the way is added to `problems`."""
    b = _Builder(file, base_dir, problems)
    settings = Settings(**b.values(doc.get("settings"), None, "settings."))
    kinds = doc.get("kinds") if isinstance(doc.get("kinds"), dict) else {}
    built = {name: b.kind(name, table) for name, table in kinds.items()
             if isinstance(table, dict) and (name, None) not in b.refused}
    agents = b.agents(doc["agents"]) if isinstance(doc.get("agents"), dict) else None
    pools = doc.get("pools") if isinstance(doc.get("pools"), dict) else {}
    slots = {name: b.values(table, None, f"pools.{name}.").get("slots")
             for name, table in pools.items() if isinstance(table, dict)}
    return Registry(Path(file), settings, MappingProxyType(built), agents, MappingProxyType(slots))
