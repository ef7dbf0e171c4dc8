"""reference/registry.md: every key of the registry, from the sources that own each fact.

- which keys there are, their types, descriptions and which are required: the JSON Schema
  (python_runner/tickq/registry/registry.schema.json);
- the bounds: `tickq.registry_limits()` of a migrated database;
- the defaults: the NamedTuples of tickq.registry.model (what a key left out becomes);
- the example: every-key.toml beside this file, a registry that names every key (the docs' TOML
  test syncs it, and the reference test holds that it names every key of the schema).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any, NamedTuple

from common import GEN, PACKAGE, code, header, table

SCHEMA = PACKAGE / "registry" / "registry.schema.json"
EXAMPLE = GEN / "every-key.toml"

# (title, schema path to the section's object, the model class whose defaults apply, how the
# bounds' keys are spelled in tickq.registry_limits: a prefix, or "" for the bare key)
SECTIONS = (
    ("[settings]", ("properties", "settings"), "Settings", ""),
    ("[kinds.NAME]", ("$defs", "kind"), "Kind", ""),
    ("[[kinds.NAME.steps]]", ("$defs", "step"), "Step", ""),
    ("[pools.NAME]", ("$defs", "pool"), None, "pools."),
    ("[agents]", ("$defs", "agents"), "Agents", "agents."),
    ("[agents.tools.NAME]", ("$defs", "tool"), "AgentTool", "agents.tools."),
)

# What a key left out means, where the model's default is None or not a plain value.
ABSENT = {
    "alert_command": "none", "alert_url": "none", "report_html": "none", "metrics_file": "none",
    "ping_url": "none", "offset": "0", "at": "-", "on": "every day", "days": "every day",
    "months": "every month", "cron": "-", "every": "-", "timezone": "`settings.timezone`",
    "cwd": "the registry's folder", "legacy": "none", "steps": "-",
    "first_run": "`now` for an every cadence, `next_slot` for a calendar",
    "catch_up": "none: every missed slot merges into one run", "api_key_env": "none",
    "project": "the registry file as given",
    "max_turns": "the cap, 6", "deliver": "none",
    "runner": "this tickq's own `python -m tickq.agents`",
    "parameters": "`{\"type\": \"object\"}`", "env": "none", "pools": "none",
    "tools": "none: agents call no command",
}
# Rules on a value that are not a row of tickq.registry_limits (the database holds them too).
RULES = {
    "retry_max": "at least `retry_base`", "weight": "at most `settings.slots`",
    "offset": "from 0 up to its cadence", "days": "no 0", "months": "`jan`..`dec`",
    "at": "`HH:MM`, not repeated",
    "timezone": "an IANA zone name", "priority": "`urgent`, `high`, `normal`, `low`",
    "first_run": "`now` or `next_slot`", "name": "like a kind's name",
    "project": "characters of `a-z 0-9 _ . -`, a letter or digit first",
}
TYPES = {"duration": "duration", "argv": "command (argv)", "env": "table of strings",
         "integer": "integer", "number": "number", "boolean": "boolean", "lane": "lane",
         "timezone": "zone name", "directory": "folder", "legacy": "string",
         "ping_url": "URL", "step": "array of tables"}


class Key(NamedTuple):
    section: str
    name: str
    type: str
    default: str
    bounds: str
    description: str


def schema() -> dict[str, Any]:
    return json.loads(SCHEMA.read_text())


def _at(doc: dict[str, Any], path: tuple[str, ...]) -> dict[str, Any]:
    for part in path:
        doc = doc[part]
    return doc


def _type(spec: dict[str, Any]) -> str:
    ref = spec.get("$ref", "")
    if ref:
        return TYPES.get(ref.rsplit("/", 1)[-1], ref.rsplit("/", 1)[-1])
    kind = spec.get("type")
    if isinstance(kind, list):
        return " or ".join(kind)
    if kind == "array":
        items = spec.get("items", {})
        if "$ref" in items:
            return "array of tables"
        inner = items.get("type", "values")
        return "array of " + " or ".join(t + "s" for t in (inner if isinstance(inner, list)
                                                            else [inner]))
    return kind or "value"


# Definitions whose description says what a type is, not what a key is for.
PRIMITIVE = {"duration", "integer", "number", "boolean"}


def _description(name: str, spec: dict[str, Any], defs: dict[str, Any]) -> str:
    """The key's own description, else its definition's (a zone, a lane, a folder), never a
    primitive type's: a key without one is an error of the schema, to fix there."""
    ref = spec.get("$ref", "").rsplit("/", 1)[-1]
    text = spec.get("description") or ("" if ref in PRIMITIVE else
                                       defs.get(ref, {}).get("description", ""))
    if not text:
        raise SystemExit(f"registry.schema.json: key {name!r} has no description")
    return text


def forbidden(spec: dict[str, Any]) -> bool:
    """A key the schema names only to refuse it (`"not": {}`), with its own message."""
    return spec.get("not") == {}


def keys(limits: dict[str, tuple[Decimal, Decimal, str]]) -> Iterator[Key]:
    """Every key the schema allows, section by section, with its bounds and default."""
    from tickq.registry import model

    doc = schema()
    for title, path, model_name, prefix in SECTIONS:
        section = _at(doc, path)
        required = set(section.get("required", ()))
        if title == "[kinds.NAME]":
            required |= {"command", "timeout"}
        if title == "[pools.NAME]":
            required |= {"slots"}  # the database refuses a pool without it
        defaults = getattr(model, model_name)._field_defaults if model_name else {}
        for name, spec in section["properties"].items():
            if forbidden(spec):
                continue
            yield Key(title, name, _type(spec), _default(name, defaults, required, title),
                      _bounds(prefix + name, name, limits), _description(name, spec, doc["$defs"]))


def _default(name: str, defaults: dict[str, Any], required: set[str], section: str) -> str:
    from tickq.registry.durations import format_duration

    if name in required:
        if section == "[kinds.NAME]" and name == "command":
            return "required (a chain: `steps`)"
        if section == "[kinds.NAME]" and name == "timeout":
            return "required (a chain: the sum of its steps)"
        return "required"
    if section == "[[kinds.NAME.steps]]" and name in ("cwd", "env"):
        return f"the kind's `{name}`"
    if section == "[kinds.NAME]" and name == "steps":
        return "-"
    value = defaults.get(name)
    empty = value is None or (not isinstance(value, str) and hasattr(value, "__len__")
                              and not len(value))
    if name in ABSENT and (empty or name == "runner"):
        return ABSENT[name]
    if name == "timeout" and section == "[agents]":
        return "the cap, 10m"
    if empty:
        raise SystemExit(f"{section} {name}: no default in the model and none in ABSENT")
    if isinstance(value, bool):
        return code(str(value).lower())
    if isinstance(value, int) and _is_duration(name):
        return code(format_duration(value))
    if isinstance(value, str):
        return code(json.dumps(value))
    return code(value)


def _is_duration(name: str) -> bool:
    spec = _find(name)
    return spec is not None and spec.get("$ref", "").endswith("/duration")


def _find(name: str) -> dict[str, Any] | None:
    doc = schema()
    for _, path, _, _ in SECTIONS:
        spec = _at(doc, path)["properties"].get(name)
        if spec is not None:
            return spec
    return None


def _bounds(limit_key: str, name: str, limits: dict[str, tuple[Decimal, Decimal, str]]) -> str:
    from tickq.registry.durations import format_duration

    found = limits.get(limit_key) or limits.get(name)
    if name == "on":
        found = None
    text = ""
    if found:
        low, high, unit = found
        if unit == "s":
            text = f"{format_duration(int(low))} to {format_duration(int(high))}"
        else:
            text = f"{_number(low)} to {_number(high)}"
    rule = RULES.get(name, "")
    if name == "on" and "on.nth" in limits:
        low, high, _ = limits["on.nth"]
        rule = (f"`mon`..`sun`, ranges `mon-fri`, nth weekdays `{_ordinal(int(low))} mon`.."
                f"`{_ordinal(int(high))} sun`, `last mon`..`last sun`")
    # A length's bounds read on into its rule: "1 to 63 characters of ...".
    sep = " " if rule.startswith("characters") else "; "
    return sep.join(part for part in (text, rule) if part) or "-"


def _number(value: Decimal) -> str:
    return str(value.normalize()) if value != value.to_integral() else str(int(value))


def _ordinal(n: int) -> str:
    return f"{n}{'st' if n == 1 else 'nd' if n == 2 else 'rd' if n == 3 else 'th'}"


def limits_of(conn: Any) -> dict[str, tuple[Decimal, Decimal, str]]:
    rows = conn.execute("SELECT key, low, high, unit FROM tickq.registry_limits()").fetchall()
    return {key: (low, high, unit) for key, low, high, unit in rows}


def page(conn: Any) -> str:
    limits = limits_of(conn)
    found = list(keys(limits))
    doc = schema()
    parts = [header("Registry keys", "the JSON Schema registry.schema.json, "
                    "tickq.registry_limits(), the defaults of tickq.registry.model"), INTRO]
    duration = doc["$defs"]["duration"]["description"].removeprefix("A duration: ")
    parts.append(f"**Durations** are strings of {duration}\n")
    for title, *_ in SECTIONS:
        rows = [(code(k.name), k.type, k.default, k.bounds, k.description)
                for k in found if k.section == title]
        parts.append(f"## `{title}`\n")
        parts.append(SECTION_TEXT.get(title, ""))
        parts.append(table(("key", "type", "default", "bounds", "what"), rows))
    refused = [(name, spec["x-message"]["not"]) for name, spec in doc["$defs"]["agents"]
               ["properties"].items() if forbidden(spec)]
    parts.append("Refused in `[agents]`: " + "; ".join(
        f"{code(name)} ({message})" for name, message in refused) + ".\n")
    parts.append(EXAMPLE_TEXT + "```toml\n" + EXAMPLE.read_text() + "```\n")
    return "\n".join(part for part in parts if part)


INTRO = """
Every key a registry file may hold, with its type, its default when left out and its bounds.
[Write a schedule](../how-to/schedules.md) shows the schedule keys at work; the file at the end
of this page names every key.

## How a registry is judged

An invalid registry stops tickq before it changes anything, with one line per problem naming the
file, the kind and the key, and exit status 2.

1. **The file's shape** is checked first, all problems at once: TOML, known keys, types,
   duration syntax, argv lists, which keys go together. It is one JSON Schema,
   `registry.schema.json` ([Check the registry in your editor](../how-to/editor-support.md)).
2. **The rules on values** have one owner, the database (`tickq.sync_registry`, whose
   `tickq.registry_problems` lists every value it refuses, by the bounds of
   `tickq.registry_limits()`), so a registry file and the JSON a script sends get the same
   verdict.

The registry file must be a regular file of UTF-8 text (a byte order mark, as Notepad's "UTF-8
with BOM" writes, is skipped) of at most 1 MiB; a file not there is named with the folder looked
in (`registry.toml: file not found in /srv/app (name the registry with --registry FILE or
TICKQ_REGISTRY=FILE)`). A registry with no kinds is refused, since syncing it would retire every
kind, unless `--allow-empty` is given. A sync from another project's registry that would retire
kinds ([Two projects on one server](../how-to/two-projects.md)) is named with the file's own
problems, all in one answer.
"""

SECTION_TEXT = {
    "[kinds.NAME]": "A kind has exactly one of `every`, `at` or `cron`; `offset` goes with "
    "`every` only, and `on`, `days`, `months` and `timezone` with `at` or `cron`. A chain has "
    "`steps` instead of `command`. Kind names are 1-100 characters of `a-z 0-9 _ . -`, "
    "starting with a letter or digit (`tickq.` is reserved).\n",
    "[pools.NAME]": "A kind naming a pool (`pools = [\"NAME\"]`) takes one of its slots per "
    "run; a kind naming a pool the registry lacks is refused.\n",
    "[agents.tools.NAME]": "Tool names are 1-63 characters of `a-z 0-9 _ -`, starting with a "
    "letter or digit.\n",
}

EXAMPLE_TEXT = """
## A registry with every key

Every key above, in one file that tickq accepts (the test suite syncs it):

"""


def example_keys(text: str | None = None) -> set[tuple[str, str]]:
    """(section title, key) of every key the example names."""
    import tomllib

    doc = tomllib.loads(text if text is not None else EXAMPLE.read_text())
    found = {("[settings]", k) for k in doc.get("settings", {})}
    for kind in doc.get("kinds", {}).values():
        found |= {("[kinds.NAME]", k) for k in kind}
        for step in kind.get("steps", ()):
            found |= {("[[kinds.NAME.steps]]", k) for k in step}
    for pool in doc.get("pools", {}).values():
        found |= {("[pools.NAME]", k) for k in pool}
    agents = doc.get("agents", {})
    found |= {("[agents]", k) for k in agents}
    for tool in agents.get("tools", {}).values():
        found |= {("[agents.tools.NAME]", k) for k in tool}
    return found


def write_example_folder(folder: Path) -> Path:
    """The example as a registry folder (its `cwd` folders made), for a test to sync."""
    (folder / "jobs").mkdir(parents=True, exist_ok=True)
    path = folder / "registry.toml"
    path.write_text(EXAMPLE.read_text())
    return path
