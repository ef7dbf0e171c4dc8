"""The registry file (TOML) -> validated, immutable settings and kinds.

Validation never stops at the first mistake: every problem is collected and raised together in
one RegistryError, each naming the file, the kind and the key it is about.
"""

from __future__ import annotations

import datetime as dt
import re
import tomllib
import zoneinfo
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from types import MappingProxyType
from typing import Any

from tickq.durations import parse_duration

PRIORITIES = ("urgent", "high", "normal", "low")
WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
MAX_INT = 2**31 - 1  # the database's integer columns
KIND_NAME = re.compile(r"[a-z0-9][a-z0-9_.-]{0,99}")
_CLOCK_TIME = re.compile(r"([01]\d|2[0-3]):[0-5]\d")

_TOP_KEYS = ("settings", "kinds")
_SETTINGS_KEYS = (
    "slots", "tick", "stale_after", "timezone", "lease_margin", "capacity_margin",
    "alert_command", "alert_after", "alert_timeout", "retry_base", "retry_max",
    "housekeeping_every", "housekeeping_timeout", "retention", "keep_runs",
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
    housekeeping_timeout: int = 60  # its timeout, which counts in the lease like any kind's
    retention: int = 30 * 86400  # job_run and drift rows older than this are pruned...
    keep_runs: int = 100  # ...but never the latest keep_runs of a kind

    def to_sync_json(self) -> dict[str, Any]:
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
            "housekeeping_timeout": self.housekeeping_timeout,
            "retention": self.retention,
            "keep_runs": self.keep_runs,
        }


@dataclass(frozen=True)
class Kind:
    """One recurring job. Exactly one of `every` (seconds) or `at` (clock times) is set;
    `timezone` is set (the kind's or the settings' default) exactly when `at` is."""

    name: str
    command: tuple[str, ...]
    timeout: int
    every: int | None = None
    at: tuple[str, ...] = ()
    on: tuple[str, ...] = ()
    timezone: str | None = None
    priority: str = "normal"
    retries: int = 0
    enabled: bool = True
    cwd: Path | None = None
    env: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))

    def to_sync_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"command": list(self.command)}
        if self.every is not None:
            out["every"] = self.every
        else:
            out["at"] = list(self.at)
            if self.on:
                out["on"] = list(self.on)
            out["timezone"] = self.timezone
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
    """Read and validate a registry file; `cwd` values are relative to its directory."""
    path = Path(path)
    try:
        text = path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        raise RegistryError([Problem(str(path), None, None, "file not found")]) from None
    except UnicodeDecodeError as e:
        raise RegistryError([Problem(str(path), None, None, f"not UTF-8 text: {e}")]) from None
    except OSError as e:
        reason = e.strerror or str(e)
        raise RegistryError([Problem(str(path), None, None, f"cannot read: {reason}")]) from None
    return parse_registry(text, str(path), path.absolute().parent)


def parse_registry(text: str, path_for_messages: str | Path, base_dir: str | Path) -> Registry:
    """Validate registry TOML `text`; raise RegistryError listing every problem."""
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
            slots=get("slots", _int_at_least(1), d.slots),
            tick=get("tick", _duration, d.tick),
            stale_after=get("stale_after", _duration, d.stale_after),
            timezone=get("timezone", _timezone, d.timezone),
            lease_margin=get("lease_margin", _duration, d.lease_margin),
            capacity_margin=get("capacity_margin", _fraction, d.capacity_margin),
            alert_command=get("alert_command", _argv, d.alert_command),
            alert_after=get("alert_after", _int_at_least(1), d.alert_after),
            alert_timeout=get("alert_timeout", _duration, d.alert_timeout),
            retry_base=get("retry_base", _duration, d.retry_base),
            retry_max=get("retry_max", _duration, d.retry_max),
            housekeeping_every=get("housekeeping_every", _duration, d.housekeeping_every),
            housekeeping_timeout=get("housekeeping_timeout", _duration, d.housekeeping_timeout),
            retention=get("retention", _duration, d.retention),
            keep_runs=get("keep_runs", _int_at_least(1), d.keep_runs),
        )

    def kind(self, name: str, table: Any, default_timezone: str) -> Kind | None:
        before = len(self.problems)
        if not KIND_NAME.fullmatch(name):
            self.report(name, None, "kind name must match ^[a-z0-9][a-z0-9_.-]{0,99}$")
        elif name.startswith("tickq."):
            self.report(name, None, 'names starting with "tickq." are reserved for built-in kinds')
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
        at = get("at", _clock_times, ())
        on = get("on", _weekdays, ())
        timezone = get("timezone", _timezone)
        if "every" in table and "at" in table:
            self.report(name, "every", 'give either "every" or "at", not both')
        elif "every" not in table and "at" not in table:
            self.report(name, "every", 'missing; give "every" (e.g. "5m") or "at" (e.g. "06:00")')
        elif "every" in table:
            for key in ("on", "timezone"):
                if key in table:
                    self.report(name, key, f'"{key}" only applies to "at" schedules, not "every"')
        kind = Kind(
            name=name,
            command=command,
            timeout=timeout,
            every=every,
            at=at,
            on=on,
            timezone=None if "every" in table else (timezone or default_timezone),
            priority=get("priority", _choice("priority", PRIORITIES), "normal"),
            retries=get("retries", _int_at_least(0), 0),
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


def _int_at_least(low: int) -> Callable[[Any], int]:
    def convert(value: Any) -> int:
        if not isinstance(value, int) or isinstance(value, bool):
            raise _Invalid(f"must be an integer >= {low}, got {_type(value)}")
        if value < low:
            raise _Invalid(f"must be an integer >= {low}, got {value}")
        if value > MAX_INT:
            raise _Invalid(f"must be an integer <= {MAX_INT}, got {value}")
        return value

    return convert


def _fraction(value: Any) -> float:
    if not isinstance(value, int | float) or isinstance(value, bool):
        raise _Invalid(f"must be a number in [0, 1), got {_type(value)}")
    if not 0 <= value < 1:
        raise _Invalid(f"must be a number in [0, 1), got {value}")
    return float(value)


def _bool(value: Any) -> bool:
    if not isinstance(value, bool):
        raise _Invalid(f"must be true or false, got {_type(value)}")
    return value


def _choice(what: str, allowed: tuple[str, ...]) -> Callable[[Any], str]:
    def convert(value: Any) -> str:
        if value not in allowed:
            raise _Invalid(f"{what} must be one of {', '.join(allowed)}, got {value!r}")
        return value

    return convert


@cache
def _zone_names() -> frozenset[str]:
    return frozenset(zoneinfo.available_timezones())


def _timezone(value: Any) -> str:
    if not isinstance(value, str):
        raise _Invalid(f"time zone must be a string, got {_type(value)}")
    # POSIX-style offsets ("GMT+3", "UTC-5") read backwards and the database refuses them.
    if value not in _zone_names() or (
        re.search(r"[+-][0-9]", value) and not value.startswith("Etc/")
    ):
        raise _Invalid(f'unknown time zone "{value}"; use an IANA name like "Europe/London"')
    zoneinfo.ZoneInfo(value)  # the name is listed, so this loads
    return value


def _clock_times(value: Any) -> tuple[str, ...]:
    times = [value] if isinstance(value, str | dt.time) else value
    if not isinstance(times, list) or not times:
        raise _Invalid(f'at must be "HH:MM" or a non-empty list of them, got {value!r}')
    # TOML also has unquoted local times (at = 06:00); accept those when they are whole minutes.
    times = [_hh_mm(t) if isinstance(t, dt.time) else t for t in times]
    for t in times:
        if not isinstance(t, str) or not _CLOCK_TIME.fullmatch(t):
            raise _Invalid(f'time must be "HH:MM" on a 24-hour clock (00:00 to 23:59), got {t!r}')
    if len(set(times)) != len(times):
        raise _Invalid(f"times must not repeat, got {times!r}")
    return tuple(times)


def _hh_mm(t: dt.time) -> str | dt.time:
    return t.strftime("%H:%M") if (t.second, t.microsecond) == (0, 0) else t


def _weekdays(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not value:
        raise _Invalid(f'on must be a non-empty list of days like ["mon", "thu"], got {value!r}')
    for day in value:
        if day not in WEEKDAYS:
            raise _Invalid(f"day must be one of {' '.join(WEEKDAYS)}, got {day!r}")
    if len(set(value)) != len(value):
        raise _Invalid(f"days must not repeat, got {value!r}")
    return tuple(value)


def _env(value: Any) -> Mapping[str, str]:
    if not isinstance(value, dict):
        raise _Invalid(f"env must be a table of strings, got {_type(value)}")
    for name, text in value.items():
        if not name or "=" in name or "\0" in name:
            raise _Invalid(f"env name {name!r} must be non-empty, without '=' or NUL")
        if not isinstance(text, str) or "\0" in text:
            raise _Invalid(f"env.{name} must be a string without NUL, got {_type(text)}")
    return MappingProxyType(dict(value))
