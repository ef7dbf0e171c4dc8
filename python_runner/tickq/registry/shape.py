"""The registry file's shape, as registry.schema.json states it, checked with `jsonschema`.

The schema is the one statement of the shape: known keys, the type of each value, durations by
pattern, which keys go together. Editors read the same file (docs/how-to/editor-support.md). Each
failure becomes one Problem naming the kind and the key a person wrote; the wording is the
schema's own `x-message` for the failing keyword, so a rule and its message sit side by side.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterator, Mapping
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tickq.registry.durations import parse_duration
from tickq.registry.model import Problem

if TYPE_CHECKING:
    import jsonschema
    from jsonschema.exceptions import ValidationError

_TYPE_NAMES = {str: "a string", bool: "a boolean", int: "an integer", float: "a number",
               list: "an array", dict: "a table", dt.time: "a time", dt.date: "a date",
               dt.datetime: "a date-time"}  # fmt: skip


def type_name(value: Any) -> str:
    """How the file spells the type of `value`, for messages."""
    return _TYPE_NAMES.get(type(value), type(value).__name__)


@cache
def schema_text() -> str:
    """registry.schema.json, shipped beside this module."""
    # Beside this module in the package (package data), read as a file: a tick pays for no
    # importlib.resources machinery.
    return Path(__file__).with_name("registry.schema.json").read_text("utf-8")


@cache
def schema() -> dict[str, Any]:
    return json.loads(schema_text())


def _is_integer(checker: Any, value: Any) -> bool:
    # JSON Schema counts 1.0 as an integer; a registry's `retries = 1.0` is a mistake.
    return isinstance(value, int) and not isinstance(value, bool)


@cache
def _validator() -> jsonschema.Draft202012Validator:
    import jsonschema  # here, not above: a text that passed before needs none of it

    cls = jsonschema.Draft202012Validator
    checker = cls.TYPE_CHECKER.redefine("integer", _is_integer)
    return jsonschema.validators.extend(cls, type_checker=checker)(schema())


def shape_problems(doc: Mapping[str, Any], file: str) -> list[Problem]:
    """Every way `doc` (the file's TOML) departs from the schema, one Problem each, in the
    schema's order, without repeats. (parse.py does not ask again of a text that passed:
    tickq.registry.shape_cache.)"""
    found: dict[Problem, None] = {}
    for error in _validator().iter_errors(doc):
        for problem in _problems(error, doc, file):
            found.setdefault(problem)
    return list(found)


def _problems(error: ValidationError, doc: Mapping[str, Any], file: str) -> Iterator[Problem]:
    path = list(error.absolute_path)
    keyword = error.validator
    if keyword == "additionalProperties" and error.validator_value is False:
        known = [k for k, v in error.schema.get("properties", {}).items() if v.get("not") != {}]
        for extra in error.instance:
            if extra not in error.schema.get("properties", {}):
                yield _problem(file, [*path, extra], None, _unknown_key(extra, known))
        return
    if keyword == "required":
        for name in error.validator_value:
            if name not in error.instance:
                yield _problem(file, [*path, name], None, _message(error, doc, path, name=name))
        return
    if "propertyNames" in error.relative_schema_path:
        path.append(error.instance)
    yield _problem(file, path, error.schema.get("x-key"), _message(error, doc, path))


def _unknown_key(name: str, known: list[str]) -> str:
    """The nearest known key for a typo ("timout"), else every key that table takes."""
    import difflib  # only for a registry with a mistake in it

    close = difflib.get_close_matches(name, known, n=1)
    if close:
        return f'unknown key; did you mean "{close[0]}"?'
    return f"unknown key; expected one of {', '.join(known)}"


def _message(error: ValidationError, doc: Mapping[str, Any], path: list[Any], **extra: Any) -> str:
    messages = error.schema.get("x-message", {})
    keyword = str(error.validator)
    template = (messages.get(f"{keyword}:{_json_type(error.instance)}")
                or messages.get(keyword) or messages.get("*"))
    if template is None:
        return error.message
    fields = {
        "value": error.instance,
        "type": type_name(error.instance),
        "whole": _at(doc, path[: _key_length(path)]),
        "index": next((p for p in reversed(path) if isinstance(p, int)), None),
        "name": path[-1] if path else None,
        "table": ".".join(str(p) for p in path),
        "duration": _duration_problem(error.instance) if "{duration}" in template else "",
        **extra,
    }
    return template.format(**fields)


def _duration_problem(value: Any) -> str:
    try:
        parse_duration(value)
    except ValueError as e:
        return str(e)
    return f'duration must look like "30s", "5m", "1h30m" or "1d", got "{value}"'


def _json_type(value: Any) -> str:
    return {str: "string", bool: "boolean", list: "array", dict: "object"}.get(
        type(value), "number" if isinstance(value, int | float) else "other")


def _at(doc: Any, path: list[Any]) -> Any:
    for part in path:
        doc = doc[part]
    return doc


def _key_length(path: list[Any]) -> int:
    """How much of a document path names the key a person wrote: "settings.tick", a kind's
    "every", a step's "steps[2].name", "agents.tools.search.timeout". The rest is inside the
    value (an argv item, an env name)."""
    head = path[0] if path else None
    if head == "kinds":
        if len(path) > 3 and path[2] == "steps" and isinstance(path[3], int):
            return min(len(path), 5)
        return min(len(path), 3)
    if head == "agents" and len(path) > 1 and path[1] == "tools":
        return min(len(path), 4)
    return min(len(path), 2)


def _problem(file: str, path: list[Any], override: str | None, message: str) -> Problem:
    path = path[: _key_length(path)]
    kind = None
    if path and path[0] == "kinds" and len(path) > 1:
        kind, path = str(path[1]), path[2:]
        if path and path[0] == "steps" and len(path) > 1:
            path = [f"steps[{path[1] + 1}]", *path[2:]]
    if override is not None:
        return Problem(file, kind, override, message)
    return Problem(file, kind, ".".join(str(p) for p in path) or None, message)
