"""The TOML `legacy import` writes: values, and the keys of one kind or step."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from tickq.registry.durations import format_duration


def toml_string(text: str) -> str:
    """`text` as a TOML basic string."""
    out = ['"']
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def toml_key(key: str) -> str:
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else toml_string(key)


def toml_value(value: Any) -> str:
    """A string, number, boolean, list of those or table of strings as TOML."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, str):
        return toml_string(value)
    if isinstance(value, Mapping):
        pairs = ", ".join(f"{toml_key(k)} = {toml_value(v)}" for k, v in value.items())
        return f"{{ {pairs} }}" if pairs else "{}"
    return "[" + ", ".join(toml_value(v) for v in value) + "]"


def schedule_lines(schedule: Mapping[str, Any], every: int, registry_zone: str) -> list[str]:
    """A job's schedule keys (the registry's own), `every` when it has none; its `timezone`
    only where it differs from the registry's."""
    if not schedule:
        return [f'every = "{format_duration(every)}"']
    return [f"{key} = {toml_value(value)}" for key, value in schedule.items()
            if not (key == "timezone" and value == registry_zone)]


def command_lines(argv: Sequence[str], timeout: int, cwd: str | None, env: Mapping[str, str],
                  legacy: str) -> list[str]:
    lines = [f"command = {toml_value(list(argv))}", f'timeout = "{format_duration(timeout)}"']
    if cwd is not None:
        lines.append(f"cwd = {toml_string(cwd)}")
    if env:
        lines.append(f"env = {toml_value(env)}")
    lines.append(f"legacy = {toml_string(legacy)}")
    return lines


def comment(text: str) -> str:
    """`text` fit for a TOML comment: one line, no control character."""
    return "".join(ch if ch == "\t" or (ord(ch) >= 0x20 and ord(ch) != 0x7F) else "?"
                   for ch in text)
