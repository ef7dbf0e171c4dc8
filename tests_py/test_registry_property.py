"""One judge, two doors: registries generated around the bounds of tickq.registry_limits get the
same verdict through the file (TOML -> load_registry -> to_sync_json -> tickq.sync_registry)
and through the JSON a script sends (tickq.registry_problems on it directly): both accept, or
both refuse naming the same kinds and keys."""

from __future__ import annotations

import math
import tempfile
import uuid
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import psycopg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from psycopg.types.json import Jsonb

from tickq import db
from tickq.db.api import registry as registry_api
from tickq.db.errors import RegistryRefused
from tickq.registry import load_registry

SETTING_DURATIONS = ("tick", "stale_after", "lease_margin", "retry_base", "retry_max",
                     "housekeeping_every", "housekeeping_timeout", "retention", "alert_timeout",
                     "db_connect_timeout", "db_statement_timeout", "db_lock_timeout")
SETTING_COUNTS = ("slots", "keep_runs", "alert_after")
ZONES = ("UTC", "Europe/London", "America/Chicago", "localtime", "PST", "europe/london")
TIMES = ("06:00", "18:30", "23:59", "24:00", "6:00")
DAYS = ("mon", "fri", "sun", "someday")


@pytest.fixture(scope="module")
def judge(pg_server_url: str, template_db: str) -> Iterator[psycopg.Connection]:
    """One database for every example: each sync is rolled back, so each starts the same."""
    name = f"t_{uuid.uuid4().hex}"
    url = db.create_database(pg_server_url, name, template=template_db)
    try:
        with db.connect(url) as connection:
            yield connection
    finally:
        db.drop_database(pg_server_url, name)


@pytest.fixture(scope="module")
def bounds(judge: psycopg.Connection) -> dict[str, tuple[Decimal, Decimal]]:
    rows = judge.execute("SELECT key, low, high FROM tickq.registry_limits()").fetchall()
    return {key: (low, high) for key, low, high in rows}


def around(low: Decimal, high: Decimal, floor: int = 0) -> st.SearchStrategy[int]:
    """Whole numbers at, just past and between the bounds (never below `floor`)."""
    edges = [int(v) for v in (low - 1, low, high, high + 1) if v >= floor]
    return st.one_of(st.sampled_from(edges), st.integers(int(low), int(high)))


@st.composite
def registries(draw: st.DrawFn, bounds: dict[str, tuple[Decimal, Decimal]]) -> dict[str, Any]:
    """A registry as values: durations in seconds, the rest as the file writes them."""
    doc: dict[str, Any] = {"settings": {}, "kinds": {}}
    for key in draw(st.lists(st.sampled_from(SETTING_DURATIONS), max_size=3, unique=True)):
        doc["settings"][key] = draw(around(*bounds[key]))
    for key in draw(st.lists(st.sampled_from(SETTING_COUNTS), max_size=2, unique=True)):
        doc["settings"][key] = draw(around(*bounds[key], floor=-1))
    if draw(st.booleans()):
        doc["settings"]["capacity_margin"] = draw(st.sampled_from(
            [-0.01, 0.0, 0.5, 0.9, 0.91, math.nan, math.inf]))
    if draw(st.booleans()):
        doc["settings"]["timezone"] = draw(st.sampled_from(ZONES))
    for name in draw(st.lists(st.sampled_from(["a", "b-2", "Bad_Name", "x.y"]), min_size=1,
                              max_size=3, unique=True)):
        kind: dict[str, Any] = {"command": ["true"], "timeout": draw(around(*bounds["timeout"]))}
        if draw(st.booleans()):
            kind["every"] = draw(around(*bounds["every"]))
        else:
            kind["at"] = draw(st.lists(st.sampled_from(TIMES), min_size=1, max_size=3))
            if draw(st.booleans()):
                kind["on"] = draw(st.lists(st.sampled_from(DAYS), min_size=1, max_size=3))
            if draw(st.booleans()):
                kind["timezone"] = draw(st.sampled_from(ZONES))
        if draw(st.booleans()):
            kind["retries"] = draw(around(*bounds["retries"], floor=-1))
        doc["kinds"][name] = kind
    if draw(st.booleans()):
        agents: dict[str, Any] = {}
        for key in draw(st.lists(st.sampled_from(["max_turns", "retries", "http_attempts"]),
                                 max_size=2, unique=True)):
            agents[key] = draw(around(*bounds[f"agents.{key}"], floor=-1))
        for key in draw(st.lists(st.sampled_from(["timeout", "request_timeout"]), max_size=1)):
            agents[key] = draw(around(*bounds[f"agents.{key}"]))
        tool = draw(st.one_of(st.none(), around(*bounds["agents.tools.timeout"])))
        doc["agents"] = (agents, tool)
    return doc


DURATION_KEYS = {*SETTING_DURATIONS, "timeout", "every", "request_timeout"}


def _toml_value(key: str, value: Any) -> str:
    if key in DURATION_KEYS:
        return f'"{value}s"'
    if isinstance(value, float):
        return "nan" if math.isnan(value) else "inf" if math.isinf(value) else repr(value)
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, list):
        return "[" + ", ".join(f'"{v}"' for v in value) + "]"
    return str(value)


def as_toml(doc: dict[str, Any]) -> str:
    lines = ["[settings]", *(f"{k} = {_toml_value(k, v)}" for k, v in doc["settings"].items())]
    for name, kind in doc["kinds"].items():
        lines += [f'[kinds."{name}"]', *(f"{k} = {_toml_value(k, v)}" for k, v in kind.items())]
    if "agents" in doc:
        agents, tool = doc["agents"]
        lines += ["[agents]", 'base_url = "http://127.0.0.1:9/v1"', 'model = "m"',
                  *(f"{k} = {_toml_value(k, v)}" for k, v in agents.items())]
        if tool is not None:
            lines += ["[agents.tools.t]", 'command = ["true"]', 'description = "a tool"',
                      f'timeout = "{tool}s"']
    return "\n".join(lines) + "\n"


def as_json(doc: dict[str, Any]) -> dict[str, Any]:
    """The JSON a script would send for the same registry: seconds, and a number JSON cannot
    hold written as its name."""
    settings = {k: (str(v) if isinstance(v, float) and not math.isfinite(v) else v)
                for k, v in doc["settings"].items()}
    out: dict[str, Any] = {"settings": settings, "kinds": doc["kinds"]}
    if "agents" in doc:
        agents, tool = doc["agents"]
        out["agents"] = {**agents, **({"tools": ["t"], "tool_timeouts": {"t": tool}}
                                      if tool is not None else {})}
    return out


def file_verdict(conn: psycopg.Connection, text: str) -> set[tuple[str | None, str | None]]:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "registry.toml"
        path.write_text(text)
        registry = load_registry(path)  # the shape is always right here: values are the point
        try:
            with conn.transaction():
                registry_api.sync_registry(conn, registry)
                raise _Accepted
        except _Accepted:
            return set()
        except RegistryRefused as exc:
            assert exc.problems, "a refusal names at least one problem"
            return {(p.kind, p.key) for p in exc.problems}


class _Accepted(Exception):
    """Rolls an accepted sync back."""


Verdict = set[tuple[str | None, str | None]]


def json_verdict(conn: psycopg.Connection, doc: dict[str, Any]) -> Verdict:
    rows = conn.execute("SELECT kind, key FROM tickq.registry_problems(%s)",
                        [Jsonb(doc)]).fetchall()
    return {(kind, registry_api.file_key(kind, key)) for kind, key in rows}


def test_the_file_and_the_json_get_the_same_verdict(
    judge: psycopg.Connection, bounds: dict[str, tuple[Decimal, Decimal]]
) -> None:
    @settings(max_examples=60, deadline=None, derandomize=True,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(registries(bounds))
    def same(doc: dict[str, Any]) -> None:
        assert file_verdict(judge, as_toml(doc)) == json_verdict(judge, as_json(doc)), as_toml(doc)

    same()
