"""The registry file (TOML) -> immutable settings and kinds, checked for shape.

This module checks the file's shape: TOML, known keys, the type of each value, duration syntax,
argv lists, env tables, cwd folders. The rules on values (bounds, kind names, time zones,
weekdays, times of day, repeats) have one owner, the database (tickq.sync_registry, and
tickq.registry_problems for the full list), so the file and the JSON a script sends get the
same verdict; see tickq.db.api.registry. Validation never stops at the first mistake: every problem
is collected and raised together in one RegistryError, each naming the file, the kind and the
key it is about.
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections.abc import Mapping
from hashlib import sha256
from pathlib import Path
from types import MappingProxyType
from typing import Any, NamedTuple

# The default of a mapping field: one empty mapping, shared, which nobody can change.
_EMPTY: Mapping[str, Any] = MappingProxyType({})


class Problem(NamedTuple):
    """One thing wrong with a registry file. `kind` and `key` are None when they do not apply;
    a key under [settings] is spelled "settings.<key>"."""

    file: str
    kind: str | None
    key: str | None
    message: str

    def __str__(self) -> str:
        where = []
        if self.kind is not None:
            where.append(f'kind "{_shown(self.kind)}"')
        if self.key is not None:
            where.append(f'key "{self.key}"')
        prefix = f"{self.file}: " + (", ".join(where) + ": " if where else "")
        return prefix + self.message


def _shown(text: str) -> str:
    """`text` with its control characters written as JSON escapes (a NUL as \\u0000)."""
    return re.sub(r"[\x00-\x1f\x7f]", lambda m: f"\\u{ord(m.group()):04x}", text)


class RegistryError(Exception):
    """Every problem found in a registry file, reported at once."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = list(problems)
        super().__init__("\n".join(str(p) for p in self.problems))


class Settings(NamedTuple):
    # Who this project is, whatever path or host its checkout has (tickq.same_project); without
    # it, the registry file as given (a deploy's `current` link is one file for every release).
    project: str | None = None
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
    # The dispatcher's own limits on every database connection (sent to the database only to be
    # judged): a server that never answers, a hung statement or a lock held elsewhere ends the
    # command with exit 3 instead of hanging it.
    db_connect_timeout: int = 10
    db_statement_timeout: int = 60
    db_lock_timeout: int = 10
    report_html: Path | None = None  # the status page, rewritten at the end of every tick
    metrics_file: Path | None = None  # Prometheus metrics, replaced at the end of every tick
    ping_url: str | None = None  # every tick checks in here (a secret: never sent, never logged)
    ping_timeout: int = 5  # how long a check-in waits for its receiver, tried at most twice
    alert_url: str | None = None  # each alert as a webhook, delivered as check-ins are (a secret)

    def to_sync_json(self) -> dict[str, Any]:
        # alert_timeout and the db_* timeouts are read by the runner alone; they go along so that
        # their bounds are checked where every other bound is. A number JSON cannot hold (nan,
        # inf) goes as its name, for the database to refuse naming the key.
        named = {"project": self.project} if self.project is not None else {}
        return named | {
            "slots": self.slots,
            "tick": self.tick,
            "stale_after": self.stale_after,
            "lease_margin": self.lease_margin,
            "timezone": self.timezone,
            "capacity_margin": _finite(self.capacity_margin),
            "alert_after": self.alert_after,
            "retry_base": self.retry_base,
            "retry_max": self.retry_max,
            "housekeeping_every": self.housekeeping_every,
            "housekeeping_timeout": self.housekeeping_timeout,
            "retention": self.retention,
            "keep_runs": self.keep_runs,
            "alert_timeout": self.alert_timeout,
            "db_connect_timeout": self.db_connect_timeout,
            "db_statement_timeout": self.db_statement_timeout,
            "db_lock_timeout": self.db_lock_timeout,
            "ping_timeout": self.ping_timeout,
        }


def _finite(value: float) -> float | str:
    return value if math.isfinite(value) else str(value)


class Step(NamedTuple):
    """One step of a chain: run in order, each under its own watchdog (`timeout`)."""

    name: str
    command: tuple[str, ...]
    timeout: int
    cwd: Path | None = None
    env: Mapping[str, str] = _EMPTY
    continue_on_failure: bool = False
    legacy: str | None = None  # the old orchestrator's line; never sent to the database

    def to_sync_json(self, kind: str) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "command": list(self.command),
                               "timeout": self.timeout}
        if self.cwd is not None:
            out["cwd"] = str(self.cwd)
        if self.env:  # digests only, as for a kind's env: the values are often secrets
            out["env"] = {name: env_digest(f"{kind}.{self.name}", name, value)
                          for name, value in self.env.items()}
        if self.continue_on_failure:
            out["continue_on_failure"] = True
        return out


class Kind(NamedTuple):
    """One recurring job, as the file gives it: the schedule keys (`every` in seconds, `at`
    clock times with `on`, `days`, `months` and `timezone`, or a `cron` string with `timezone`)
    are None when the file leaves them out (the database
    gives a kind with `at` the settings' zone). Which of them go together is checked by the
    database (tickq.parse_kind). `offset` (seconds) shifts an every cadence off its
    clock-aligned slots. A chain has `steps` and an empty `command`; its `timeout` is at least
    the sum of its steps'."""

    name: str
    command: tuple[str, ...]
    timeout: int
    every: int | None = None
    offset: int | None = None
    at: tuple[str, ...] | None = None
    on: tuple[str, ...] | None = None
    days: tuple[int, ...] | None = None
    months: tuple[str | int, ...] | None = None
    cron: str | None = None
    timezone: str | None = None
    priority: str = "normal"
    retries: int = 0
    enabled: bool = True
    cwd: Path | None = None
    env: Mapping[str, str] = _EMPTY
    irreversible: bool = False  # never claimed by a schedule until a person's run arms it
    legacy: str | None = None  # the old orchestrator's line; never sent to the database
    steps: tuple[Step, ...] = ()
    resume: bool = False  # a retry of a failed chain starts at the failed step
    ping_url: str | None = None  # each run checks in here; the database gets only its digest
    first_run: str | None = None  # "now" or "next_slot": when a newly synced kind first runs
    weight: int = 1  # how many of the global slots each run takes
    pools: tuple[str, ...] = ()  # the pools ([pools.NAME]) each run takes one slot of
    catch_up: int | None = None  # seconds: a slot later than this is skipped, not run

    def to_sync_json(self) -> dict[str, Any]:
        out: dict[str, Any] = (
            {"steps": [s.to_sync_json(self.name) for s in self.steps]} if self.steps
            else {"command": list(self.command)}
        )
        if self.resume:
            out["resume"] = True
        if self.irreversible:
            out["irreversible"] = True
        if self.first_run is not None:
            out["first_run"] = self.first_run
        if self.catch_up is not None:
            out["catch_up"] = self.catch_up
        schedule = {"every": self.every, "offset": self.offset, "at": self.at, "on": self.on,
                    "days": self.days, "months": self.months, "cron": self.cron,
                    "timezone": self.timezone}
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
            out["env"] = {name: env_digest(self.name, name, value)
                          for name, value in self.env.items()}
        if self.ping_url:  # as secret as an env value
            out["ping_url"] = env_digest(self.name, "ping_url", self.ping_url)
        if self.weight != 1:  # the defaults go unsaid, so a kind without them reads as before
            out["weight"] = self.weight
        if self.pools:
            out["pools"] = list(self.pools)
        return out


def env_digest(kind: str, name: str, value: str) -> str:
    """What the database keeps of an env value: enough to see that it changed, not the value
    (tickq.env_digests in sql/api/12_spool.sql computes the same for JSON sent directly)."""
    return "sha256:" + sha256(f"{kind}:{name}={value}".encode()).hexdigest()


# User-built agents (tickq.agents): their kinds' prefix and the tools' shape. Their caps are
# bounds of tickq.registry_limits, judged by the database.
AGENT_PREFIX = "agent."
TOOL_NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,62}")


def default_agent_runner() -> tuple[str, ...]:
    """tickq's own agent runner (`python -m tickq.agents`), run by the interpreter that runs
    this tickq."""
    return (sys.executable, "-m", "tickq.agents")


class AgentTool(NamedTuple):
    """A registry command an agent may call. The model's arguments reach it as JSON on stdin,
    never in its argv. `parameters` is a JSON schema (an object), kept as canonical JSON text so
    the tool stays immutable."""

    name: str
    command: tuple[str, ...]
    description: str
    parameters_json: str
    timeout: int = 30
    cwd: Path | None = None

    @property
    def parameters(self) -> dict[str, Any]:
        return json.loads(self.parameters_json)


class Agents(NamedTuple):
    """The [agents] section: the model endpoint and the bounds of every user-built agent."""

    base_url: str
    model: str
    api_key_env: str | None = None  # the NAME of the variable holding the key, never the key
    # None: the database's cap (tickq.registry_limits), which tickq.load_agent applies.
    max_turns: int | None = None
    timeout: int | None = None
    priority: str = "normal"
    retries: int = 0
    runner: tuple[str, ...] = default_agent_runner()
    deliver: tuple[str, ...] | None = None
    deliver_timeout: int = 30
    request_timeout: int = 120  # one model call, within the agent's own watchdog
    http_attempts: int = 4  # tries of one model call on 429, 5xx, timeouts, malformed JSON
    weight: int = 1  # how many of the global slots each agent run takes
    tools: Mapping[str, AgentTool] = _EMPTY

    def to_sync_json(self) -> dict[str, Any]:
        """What the database holds of the section: the lane and the caps, and the tool names
        (so a saved agent can only name tools that exist); and the runner's own bounds, for the
        database to judge. Commands stay in this file."""
        caps = {"max_turns": self.max_turns, "timeout": self.timeout}
        return {
            "priority": self.priority,
            **{key: value for key, value in caps.items() if value is not None},
            "retries": self.retries,
            "tools": list(self.tools),
            "tool_timeouts": {name: tool.timeout for name, tool in self.tools.items()},
            "deliver_timeout": self.deliver_timeout,
            "request_timeout": self.request_timeout,
            "http_attempts": self.http_attempts,
            **({"weight": self.weight} if self.weight != 1 else {}),
        }


class Registry(NamedTuple):
    path: Path
    settings: Settings
    kinds: Mapping[str, Kind]  # in file order
    agents: Agents | None = None
    # [pools.NAME] slots = N: name -> slots (None where the file gave no slots)
    pools: Mapping[str, int | None] = _EMPTY

    def to_sync_json(self) -> dict[str, Any]:
        """The JSON `tickq.sync_registry` takes (see ARCHITECTURE.md)."""
        doc: dict[str, Any] = {
            "settings": self.settings.to_sync_json(),
            "kinds": {name: kind.to_sync_json() for name, kind in self.kinds.items()},
        }
        if self.agents is not None:
            doc["agents"] = self.agents.to_sync_json()
        if self.pools:
            doc["pools"] = {name: {} if slots is None else {"slots": slots}
                            for name, slots in self.pools.items()}
        # Walking a thousand kinds' JSON costs more than writing it once to see there is no NUL.
        return _without_nul(doc) if "\\u0000" in json.dumps(doc) else doc


def _without_nul(value: Any) -> Any:
    """`value` with each NUL of its strings written as the six characters \\u0000: PostgreSQL
    text cannot hold a NUL, and the database judges the name or value that held it (no rule
    takes a backslash) instead of refusing the whole document (22P05)."""
    if isinstance(value, str):
        return value.replace("\0", "\\u0000")
    if isinstance(value, dict):
        return {_without_nul(k): _without_nul(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_without_nul(v) for v in value]
    return value
