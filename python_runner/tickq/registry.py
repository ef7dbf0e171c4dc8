"""The registry file (TOML) -> immutable settings and kinds, checked for shape.

This module checks the file's shape: TOML, known keys, the type of each value, duration syntax,
argv lists, env tables, cwd folders. The rules on values (bounds, kind names, time zones,
weekdays, times of day, repeats) have one owner, the database (tickq.sync_registry, and
tickq.registry_problems for the full list), so the file and the JSON a script sends get the
same verdict; see tickq.registry_db. Validation never stops at the first mistake: every problem
is collected and raised together in one RegistryError, each naming the file, the kind and the
key it is about.
"""

from __future__ import annotations

import datetime as dt
import os
import stat
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from tickq.durations import parse_duration

# A registry is a text file a person writes; anything larger is a mistake (or /dev/zero).
MAX_FILE_BYTES = 1024 * 1024

_TOP_KEYS = ("settings", "kinds")
_SETTINGS_KEYS = (
    "slots", "tick", "stale_after", "timezone", "lease_margin", "capacity_margin",
    "alert_command", "alert_after", "alert_timeout", "retry_base", "retry_max",
    "housekeeping_every", "retention", "keep_runs",
)  # fmt: skip
_KIND_KEYS = (
    "command", "every", "at", "on", "timezone", "timeout", "priority", "retries", "enabled",
    "cwd", "env",
)  # fmt: skip


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a registry file. `kind` and `key` are None when they do not apply;
    a key under [settings] is spelled "settings.<key>"."""

    file: str
    kind: str | None
    key: str | None
    message: str

    def __str__(self) -> str:
        where = []
        if self.kind is not None:
            where.append(f'kind "{self.kind}"')
        if self.key is not None:
            where.append(f'key "{self.key}"')
        prefix = f"{self.file}: " + (", ".join(where) + ": " if where else "")
        return prefix + self.message


class RegistryError(Exception):
    """Every problem found in a registry file, reported at once."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = list(problems)
        super().__init__("\n".join(str(p) for p in self.problems))


@dataclass(frozen=True)
class Settings:
    slots: int = 3
    tick: int = 300
    stale_after: int = 900
    timezone: str = "UTC"
    lease_margin: int = 300
    capacity_margin: float = 0.25
    alert_command: tuple[str, ...] | None = None
    alert_after: int = 3
    alert_timeout: int = 30
    retry_base: int = 30  # first retry after this, doubling per attempt
    retry_max: int = 3600  # backoff cap
    housekeeping_every: int = 900  # the built-in kind tickq.housekeeping
    retention: int = 30 * 86400  # job_run and drift rows older than this are pruned...
    keep_runs: int = 100  # ...but never the latest keep_runs of a kind

    def to_sync_json(self) -> dict[str, Any]:
        # alert_timeout is read by the runner alone; it goes along so that its bounds are
        # checked where every other bound is.
        return {
            "slots": self.slots,
            "tick": self.tick,
            "stale_after": self.stale_after,
            "lease_margin": self.lease_margin,
            "timezone": self.timezone,
            "capacity_margin": self.capacity_margin,
            "alert_after": self.alert_after,
            "retry_base": self.retry_base,
            "retry_max": self.retry_max,
            "housekeeping_every": self.housekeeping_every,
            "retention": self.retention,
            "keep_runs": self.keep_runs,
            "alert_timeout": self.alert_timeout,
        }


@dataclass(frozen=True)
class Kind:
    """One recurring job, as the file gives it: the schedule keys (`every` in seconds, or `at`
    clock times with `on` and `timezone`) are None when the file leaves them out, except that a
    kind with `at` gets the settings' zone by default. Which of them go together is checked by
    the database (tickq.parse_kind)."""

    name: str
    command: tuple[str, ...]
    timeout: int
    every: int | None = None
    at: tuple[str, ...] | None = None
    on: tuple[str, ...] | None = None
    timezone: str | None = None
    priority: str = "normal"
    retries: int = 0
    enabled: bool = True
    cwd: Path | None = None
    env: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))

    def to_sync_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"command": list(self.command)}
        schedule = {"every": self.every, "at": self.at, "on": self.on, "timezone": self.timezone}
        out |= {k: list(v) if isinstance(v, tuple) else v
                for k, v in schedule.items() if v is not None}
        out |= {
            "timeout": self.timeout,
            "priority": self.priority,
            "retries": self.retries,
            "enabled": self.enabled,
        }
        if self.cwd is not None:
            out["cwd"] = str(self.cwd)
        if self.env:
            out["env"] = dict(self.env)
        return out


@dataclass(frozen=True)
class Registry:
    path: Path
    settings: Settings
    kinds: Mapping[str, Kind]  # in file order

    def to_sync_json(self) -> dict[str, Any]:
        """The JSON `tickq.sync_registry` takes (see ARCHITECTURE.md)."""
        return {
            "settings": self.settings.to_sync_json(),
            "kinds": {name: kind.to_sync_json() for name, kind in self.kinds.items()},
        }


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
        return Registry(Path(self.file), settings, MappingProxyType(kinds))

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
            retention=get("retention", _duration, d.retention),
            keep_runs=get("keep_runs", _int, d.keep_runs),
        )

    def kind(self, name: str, table: Any, default_timezone: str) -> Kind | None:
        before = len(self.problems)
        if not isinstance(table, dict):
            self.report(name, None, f"must be a table ([kinds.{name}]), got {_type(table)}")
            return None
        self.unknown_keys(table, _KIND_KEYS, name)

        def get(key: str, convert: Callable[[Any], Any], default: Any = None) -> Any:
            return self.check(name, key, table.get(key, _MISSING), convert, default)

        for key in ("command", "timeout"):
            if key not in table:
                self.report(name, key, f"missing; every kind needs {key}")
        command = get("command", _argv)
        timeout = get("timeout", _duration)
        every = get("every", _duration)
        at = get("at", _clock_times)
        on = get("on", _strings("on", 'days like ["mon", "thu"]'))
        timezone = get("timezone", _string("time zone"))
        # Which schedule keys go together is the database's rule (tickq.parse_kind).
        kind = Kind(
            name=name,
            command=command,
            timeout=timeout,
            every=every,
            at=at,
            on=on,
            timezone=timezone if "at" not in table else (timezone or default_timezone),
            priority=get("priority", _string("priority"), "normal"),
            retries=get("retries", _int, 0),
            enabled=get("enabled", _bool, True),
            cwd=get("cwd", self.directory),
            env=get("env", _env, MappingProxyType({})),
        )
        return kind if len(self.problems) == before else None

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


def _duration(value: Any) -> int:
    try:
        return parse_duration(value)
    except ValueError as e:
        raise _Invalid(str(e)) from None


def _int(value: Any) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise _Invalid(f"must be an integer, got {_type(value)}")
    return value


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
