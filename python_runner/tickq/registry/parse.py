"""The registry file's shape: TOML -> the model (tickq.registry.model), every problem at once."""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import stat
import tomllib
from collections.abc import Callable, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

from tickq.registry.durations import parse_duration
from tickq.registry.model import (
    TOOL_NAME,
    Agents,
    AgentTool,
    Kind,
    Problem,
    Registry,
    RegistryError,
    Settings,
    Step,
    default_agent_runner,
)

# A registry is a text file a person writes; anything larger is a mistake (or /dev/zero).
MAX_FILE_BYTES = 1024 * 1024

_TOP_KEYS = ("settings", "kinds", "agents")
_SETTINGS_KEYS = (
    "slots", "tick", "stale_after", "timezone", "lease_margin", "capacity_margin",
    "alert_command", "alert_after", "alert_timeout", "retry_base", "retry_max",
    "housekeeping_every", "housekeeping_timeout", "retention", "keep_runs",
    "db_connect_timeout", "db_statement_timeout", "db_lock_timeout", "report_html",
)  # fmt: skip
_KIND_KEYS = (
    "command", "every", "offset", "at", "on", "timezone", "timeout", "priority", "retries",
    "enabled", "cwd", "env", "irreversible", "legacy", "steps", "resume",
)  # fmt: skip
_STEP_KEYS = ("name", "command", "timeout", "cwd", "env", "continue_on_failure", "legacy")


_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_AGENTS_KEYS = (
    "base_url", "model", "api_key_env", "max_turns", "timeout", "priority", "retries", "runner",
    "deliver", "deliver_timeout", "request_timeout", "http_attempts", "tools",
)  # fmt: skip
_TOOL_KEYS = ("command", "description", "parameters", "timeout", "cwd")


def load_registry(path: str | Path) -> Registry:
    """Read and check a registry file; `cwd` values are relative to its directory."""
    path = Path(path)

    def refuse(message: str) -> RegistryError:
        return RegistryError([Problem(str(path), None, None, message)])

    try:
        # Opened without blocking (a FIFO would wait for a writer) and read only when it is a
        # regular file of a registry's size: /dev/zero never ends.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                raise refuse(f"not a regular file ({_file_type(info.st_mode)})")
            if info.st_size > MAX_FILE_BYTES:
                raise refuse(f"larger than {MAX_FILE_BYTES} bytes ({info.st_size}): not a registry")
            with os.fdopen(fd, "rb", closefd=False) as f:
                data = f.read(MAX_FILE_BYTES + 1)
        finally:
            os.close(fd)
        if len(data) > MAX_FILE_BYTES:
            raise refuse(f"larger than {MAX_FILE_BYTES} bytes: not a registry")
        text = data.decode("utf-8")
    except FileNotFoundError:
        raise refuse("file not found") from None
    except UnicodeDecodeError as e:
        raise refuse(f"not UTF-8 text: {e}") from None
    except OSError as e:
        raise refuse(f"cannot read: {e.strerror or e}") from None
    return parse_registry(text, str(path), path.absolute().parent)


def _file_type(mode: int) -> str:
    for test, name in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket")):  # fmt: skip
        if test(mode):
            return name
    return "not a file"


def parse_registry(text: str, path_for_messages: str | Path, base_dir: str | Path) -> Registry:
    """Check the shape of registry TOML `text`; raise RegistryError listing every problem."""
    file = str(path_for_messages)
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise RegistryError([Problem(file, None, None, f"invalid TOML: {e}")]) from None
    problems: list[Problem] = []
    registry = _Validator(file, Path(base_dir).absolute(), problems).registry(doc)
    if problems:
        raise RegistryError(problems)
    return registry


class _Invalid(Exception):
    """A value check failed; the message says why."""


_MISSING = object()


class _Validator:
    def __init__(self, file: str, base_dir: Path, problems: list[Problem]) -> None:
        self.file = file
        self.base_dir = base_dir
        self.problems = problems

    def report(self, kind: str | None, key: str | None, message: str) -> None:
        self.problems.append(Problem(self.file, kind, key, message))

    def check(
        self, kind: str | None, key: str, value: Any, convert: Callable[[Any], Any], default: Any
    ) -> Any:
        """`convert(value)`, or `default` (after reporting why) when the value is wrong."""
        if value is _MISSING:
            return default
        try:
            return convert(value)
        except _Invalid as e:
            self.report(kind, key, str(e))
            return default

    def unknown_keys(
        self, table: Mapping[str, Any], allowed: tuple[str, ...], kind: str | None, prefix: str = ""
    ) -> None:
        expected = ", ".join(allowed)
        for key in table:
            if key not in allowed:
                self.report(kind, prefix + key, f"unknown key; expected one of {expected}")

    def registry(self, doc: dict[str, Any]) -> Registry:
        self.unknown_keys(doc, _TOP_KEYS, None)
        settings = self.settings(_table(self, doc, "settings"))
        kinds = {}
        for name, table in _table(self, doc, "kinds").items():
            kind = self.kind(name, table, settings.timezone)
            if kind is not None:
                kinds[name] = kind
        agents = None
        if "agents" in doc:
            agents = self.agents(_table(self, doc, "agents"))
        return Registry(Path(self.file), settings, MappingProxyType(kinds), agents)

    def settings(self, table: dict[str, Any]) -> Settings:
        self.unknown_keys(table, _SETTINGS_KEYS, None, prefix="settings.")
        d = Settings()

        def get(key: str, convert: Callable[[Any], Any], default: Any) -> Any:
            return self.check(None, f"settings.{key}", table.get(key, _MISSING), convert, default)

        return Settings(
            slots=get("slots", _int, d.slots),
            tick=get("tick", _duration, d.tick),
            stale_after=get("stale_after", _duration, d.stale_after),
            timezone=get("timezone", _string("time zone"), d.timezone),
            lease_margin=get("lease_margin", _duration, d.lease_margin),
            capacity_margin=get("capacity_margin", _number, d.capacity_margin),
            alert_command=get("alert_command", _argv, d.alert_command),
            alert_after=get("alert_after", _int, d.alert_after),
            alert_timeout=get("alert_timeout", _duration, d.alert_timeout),
            retry_base=get("retry_base", _duration, d.retry_base),
            retry_max=get("retry_max", _duration, d.retry_max),
            housekeeping_every=get("housekeeping_every", _duration, d.housekeeping_every),
            housekeeping_timeout=get("housekeeping_timeout", _duration, d.housekeeping_timeout),
            retention=get("retention", _duration, d.retention),
            keep_runs=get("keep_runs", _int, d.keep_runs),
            db_connect_timeout=get("db_connect_timeout", _duration, d.db_connect_timeout),
            db_statement_timeout=get("db_statement_timeout", _duration, d.db_statement_timeout),
            db_lock_timeout=get("db_lock_timeout", _duration, d.db_lock_timeout),
            report_html=get("report_html", self.output_file, d.report_html),
        )

    def kind(self, name: str, table: Any, default_timezone: str) -> Kind | None:
        before = len(self.problems)
        if not isinstance(table, dict):
            self.report(name, None, f"must be a table ([kinds.{name}]), got {_type(table)}")
            return None
        self.unknown_keys(table, _KIND_KEYS, name)

        def get(key: str, convert: Callable[[Any], Any], default: Any = None) -> Any:
            return self.check(name, key, table.get(key, _MISSING), convert, default)

        if "steps" in table:
            steps = self.steps(name, table)
            command = ()
            timeout = get("timeout", _duration, sum(s.timeout for s in steps))
            if steps and timeout < sum(s.timeout for s in steps):
                self.report(name, "timeout", "a chain's timeout must not be shorter than the sum"
                            f" of its steps' ({sum(s.timeout for s in steps)}s), got {timeout}s")
        else:
            steps = ()
            for key in ("command", "timeout"):
                if key not in table:
                    self.report(name, key, f"missing; every kind needs {key} (or steps)")
            command = get("command", _argv)
            timeout = get("timeout", _duration)
            if "resume" in table:
                self.report(name, "resume", 'only a chain (a kind with "steps") takes "resume"')
        every = get("every", _duration)
        offset = get("offset", _duration)
        at = get("at", _clock_times)
        on = get("on", _strings("on", 'days like ["mon", "thu"]'))
        timezone = get("timezone", _string("time zone"))
        # Which schedule keys go together is the database's rule (tickq.parse_kind).
        kind = Kind(
            name=name,
            command=command,
            timeout=timeout,
            every=every,
            offset=offset,
            at=at,
            on=on,
            # Absent, the database gives a calendar kind the settings' zone (tickq.parse_kind).
            timezone=timezone,
            priority=get("priority", _string("priority"), "normal"),
            retries=get("retries", _int, 0),
            enabled=get("enabled", _bool, True),
            cwd=get("cwd", self.directory),
            env=get("env", _env, MappingProxyType({})),
            irreversible=get("irreversible", _bool, False),
            legacy=get("legacy", _legacy),
            steps=steps,
            resume=get("resume", _bool, False),
        )
        return kind if len(self.problems) == before else None

    def steps(self, kind: str, table: dict[str, Any]) -> tuple[Step, ...]:
        if "command" in table:
            self.report(kind, "steps", 'give either "command" or "steps", not both')
        value = table["steps"]
        if not isinstance(value, list) or not value:
            self.report(kind, "steps", "must be a non-empty array of tables ([[kinds.NAME.steps]])")
            return ()
        steps: list[Step] = []
        for i, item in enumerate(value):
            where = f"steps[{i + 1}]"
            if not isinstance(item, dict):
                self.report(kind, where, f"a step must be a table, got {_type(item)}")
                continue
            self.unknown_keys(item, _STEP_KEYS, kind, prefix=where + ".")
            for key in ("name", "command", "timeout"):
                if key not in item:
                    self.report(kind, f"{where}.{key}", f"missing; every step needs {key}")

            def get(key: str, convert: Callable[[Any], Any], default: Any = None,
                    item: dict[str, Any] = item, where: str = where) -> Any:
                return self.check(kind, f"{where}.{key}", item.get(key, _MISSING), convert, default)

            steps.append(Step(
                name=get("name", _step_name, ""),
                command=get("command", _argv, ()),
                timeout=get("timeout", _duration, 0),
                cwd=get("cwd", self.directory),
                env=get("env", _env, MappingProxyType({})),
                continue_on_failure=get("continue_on_failure", _bool, False),
                legacy=get("legacy", _legacy),
            ))
        names = [s.name for s in steps if s.name]
        for dup in sorted({n for n in names if names.count(n) > 1}):
            self.report(kind, "steps", f'step name "{dup}" is used twice')
        return tuple(steps)

    def agents(self, table: dict[str, Any]) -> Agents | None:
        before = len(self.problems)
        if "api_key" in table:
            self.report(None, "agents.api_key", "never put a key in the registry: set it in an "
                        "environment variable and name that variable in agents.api_key_env")
        self.unknown_keys({k: v for k, v in table.items() if k != "api_key"}, _AGENTS_KEYS, None,
                          prefix="agents.")

        def get(key: str, convert: Callable[[Any], Any], default: Any = None) -> Any:
            return self.check(None, f"agents.{key}", table.get(key, _MISSING), convert, default)

        for key in ("base_url", "model"):
            if key not in table:
                self.report(None, f"agents.{key}", f"missing; the [agents] section needs {key}")
        tools = {}
        tool_tables = table.get("tools", {})
        if not isinstance(tool_tables, dict):
            self.report(None, "agents.tools", f"must be a table of tools, got {_type(tool_tables)}")
            tool_tables = {}
        for name, tool_table in tool_tables.items():
            tool = self.tool(name, tool_table)
            if tool is not None:
                tools[name] = tool
        agents = Agents(
            base_url=get("base_url", _http_url, ""),
            model=get("model", _text(200), ""),
            api_key_env=get("api_key_env", _env_name),
            # The bounds of the numbers are the database's (tickq.registry_limits).
            max_turns=get("max_turns", _int),
            timeout=get("timeout", _duration),
            priority=get("priority", _string("priority"), "normal"),  # the database holds the lanes
            retries=get("retries", _int, 0),
            runner=get("runner", _argv, default_agent_runner()),
            deliver=get("deliver", _argv),
            deliver_timeout=get("deliver_timeout", _duration, 30),
            request_timeout=get("request_timeout", _duration, 120),
            http_attempts=get("http_attempts", _int, 4),
            tools=MappingProxyType(tools),
        )
        return agents if len(self.problems) == before else None

    def tool(self, name: str, table: Any) -> AgentTool | None:
        before = len(self.problems)
        key = f"agents.tools.{name}"
        if not TOOL_NAME.fullmatch(name):
            self.report(None, key, "a tool name is 1-63 characters of a-z 0-9 _ - starting with a "
                        "letter or digit")
        if not isinstance(table, dict):
            self.report(None, key, f"must be a table ([{key}]), got {_type(table)}")
            return None
        self.unknown_keys(table, _TOOL_KEYS, None, prefix=key + ".")

        def get(sub: str, convert: Callable[[Any], Any], default: Any = None) -> Any:
            return self.check(None, f"{key}.{sub}", table.get(sub, _MISSING), convert, default)

        for sub in ("command", "description"):
            if sub not in table:
                self.report(None, f"{key}.{sub}", f"missing; every tool needs {sub}")
        tool = AgentTool(
            name=name,
            command=get("command", _argv, ()),
            description=get("description", _text(1000), ""),
            parameters_json=get("parameters", _json_schema,
                                '{"properties":{},"type":"object"}'),
            timeout=get("timeout", _duration, 30),
            cwd=get("cwd", self.directory),
        )
        return tool if len(self.problems) == before else None

    def output_file(self, value: Any) -> Path:
        if not isinstance(value, str) or not value:
            raise _Invalid(f"must be a file path (string), got {_type(value)}")
        path = (self.base_dir / value).resolve()
        if not path.parent.is_dir():
            raise _Invalid(f"folder does not exist: {path.parent}")
        if path.is_dir():
            raise _Invalid(f"is a folder, not a file: {path}")
        return path

    def directory(self, value: Any) -> Path:
        if not isinstance(value, str) or not value:
            raise _Invalid(f"must be a directory path (string), got {_type(value)}")
        path = (self.base_dir / value).resolve()
        if not path.is_dir():
            raise _Invalid(f"directory does not exist: {path}")
        return path


def _table(v: _Validator, doc: dict[str, Any], key: str) -> dict[str, Any]:
    value = doc.get(key, {})
    if isinstance(value, dict):
        return value
    v.report(None, key, f"must be a table ([{key}]), got {_type(value)}")
    return {}


def _type(value: Any) -> str:
    names = {str: "a string", bool: "a boolean", int: "an integer", float: "a number",
             list: "an array", dict: "a table", dt.time: "a time"}  # fmt: skip
    return names.get(type(value), type(value).__name__)


def _argv(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        raise _Invalid(
            'command must be a list of strings (argv), not one string: write ["bin/x", "--flag"]'
        )
    if not isinstance(value, list):
        raise _Invalid(f"command must be a list of strings (argv), got {_type(value)}")
    if not value:
        raise _Invalid("command must not be empty")
    for i, arg in enumerate(value):
        if not isinstance(arg, str) or not arg:
            raise _Invalid(f"command[{i}] must be a non-empty string, got {arg!r}")
        if "\0" in arg:
            raise _Invalid(f"command[{i}] must not contain a NUL character")
    return tuple(value)


def _step_name(value: Any) -> str:
    # Its shape (the kind-name rule) is the database's to check (tickq.parse_chain).
    if not isinstance(value, str):
        raise _Invalid(f"a step name must be a string, got {_type(value)}")
    return value


def _legacy(value: Any) -> str:
    if not isinstance(value, str):
        raise _Invalid(f"legacy must be a string (the old line verbatim), got {_type(value)}")
    return value


def _duration(value: Any) -> int:
    try:
        return parse_duration(value)
    except ValueError as e:
        raise _Invalid(str(e)) from None


def _int(value: Any) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise _Invalid(f"must be an integer, got {_type(value)}")
    return value


def _text(limit: int) -> Callable[[Any], str]:
    def convert(value: Any) -> str:
        if not isinstance(value, str) or not value.strip() or len(value) > limit:
            raise _Invalid(f"must be a non-empty string of at most {limit} characters")
        return value

    return convert


def _http_url(value: Any) -> str:
    if not isinstance(value, str) or not re.fullmatch(r"https?://[^\s/?#]+(/[^\s?#]*)?", value):
        raise _Invalid(f'must be an http(s) URL such as "http://127.0.0.1:11434/v1", got {value!r}')
    return value.rstrip("/")


def _env_name(value: Any) -> str:
    if not isinstance(value, str) or not _ENV_NAME.fullmatch(value):
        raise _Invalid(f"must be the name of an environment variable (e.g. OPENAI_API_KEY), "
                       f"not its value; got {_type(value)}")
    return value


def _json_schema(value: Any) -> str:
    """A tool's JSON schema, from a TOML table or a JSON string, as canonical JSON text."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError as e:
            raise _Invalid(f"parameters is not valid JSON: {e}") from None
    if not isinstance(value, dict) or value.get("type") != "object":
        raise _Invalid('parameters must be a JSON schema object with "type" = "object"')
    try:
        return json.dumps(value, sort_keys=True, separators=(",", ":"), default=_no_toml_dates)
    except TypeError as e:
        raise _Invalid(str(e)) from None


def _no_toml_dates(value: Any) -> Any:
    raise TypeError(f"parameters must hold JSON values only, got {_type(value)}")


def _number(value: Any) -> float:
    if not isinstance(value, int | float) or isinstance(value, bool):
        raise _Invalid(f"must be a number, got {_type(value)}")
    return float(value)


def _bool(value: Any) -> bool:
    if not isinstance(value, bool):
        raise _Invalid(f"must be true or false, got {_type(value)}")
    return value


def _string(what: str) -> Callable[[Any], str]:
    def convert(value: Any) -> str:
        if not isinstance(value, str):
            raise _Invalid(f"{what} must be a string, got {_type(value)}")
        return value

    return convert


def _strings(what: str, example: str) -> Callable[[Any], tuple[str, ...]]:
    def convert(value: Any) -> tuple[str, ...]:
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise _Invalid(f"{what} must be a list of {example}, got {value!r}")
        return tuple(value)

    return convert


def _clock_times(value: Any) -> tuple[str, ...]:
    times = [value] if isinstance(value, str | dt.time) else value
    if not isinstance(times, list):
        raise _Invalid(f'at must be "HH:MM" or a list of them, got {value!r}')
    # TOML also has unquoted local times (at = 06:00); they go on as "HH:MM" text, and the
    # database judges them like any other ("06:00:30" is not a whole minute).
    times = [_hh_mm(t) if isinstance(t, dt.time) else t for t in times]
    for t in times:
        if not isinstance(t, str):
            raise _Invalid(f'at must be "HH:MM" or a list of them, got {t!r}')
    return tuple(times)


def _hh_mm(t: dt.time) -> str:
    return t.strftime("%H:%M") if (t.second, t.microsecond) == (0, 0) else t.isoformat()


def _env(value: Any) -> Mapping[str, str]:
    if not isinstance(value, dict):
        raise _Invalid(f"env must be a table of strings, got {_type(value)}")
    for name, text in value.items():
        if not name or "=" in name or "\0" in name:
            raise _Invalid(f"env name {name!r} must be non-empty, without '=' or NUL")
        if not isinstance(text, str) or "\0" in text:
            raise _Invalid(f"env.{name} must be a string without NUL, got {_type(text)}")
    return MappingProxyType(dict(value))
