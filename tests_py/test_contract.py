"""tickq.db.contract against a migrated database: the runner's lanes, weekdays, outcomes,
triggers and bounds are the database's, the copies kept in rooms that may not import tickq.db
(registry, host) equal them too, and what the agent runner keeps under a bound of the
database's (a transcript entry, the answer it prints) fits it."""

from __future__ import annotations

import json
import typing

import psycopg
import pytest
from psycopg.types.json import Jsonb

from tickq.agents import bounds, runner, turns
from tickq.db import contract
from tickq.host import process, spool, tail
from tickq.registry import model


def _enum(conn: psycopg.Connection, name: str) -> tuple[str, ...]:
    rows = conn.execute(
        "SELECT e.enumlabel FROM pg_enum AS e JOIN pg_type AS t ON t.oid = e.enumtypid"
        " JOIN pg_namespace AS n ON n.oid = t.typnamespace"
        " WHERE n.nspname = 'tickq' AND t.typname = %s ORDER BY e.enumsortorder", [name]).fetchall()
    assert rows, f"no enum tickq.{name}"
    return tuple(label for (label,) in rows)


@pytest.mark.parametrize(("names", "enum"), [
    (contract.LANES, "priority"),
    (contract.OUTCOMES, "outcome"),
    (contract.TRIGGERS, "run_trigger"),
    (contract.ALERT_CONDITIONS, "alert_condition"),
])
def test_names_equal_the_enums_labels_in_order(
    conn: psycopg.Connection, names: tuple[str, ...], enum: str
) -> None:
    assert names == _enum(conn, enum)


def test_the_reported_outcomes_are_the_enums_but_running_lost_and_skipped() -> None:
    unreported = {"running", "lost", "skipped"}
    assert set(contract.REPORTED_OUTCOMES) == set(contract.OUTCOMES) - unreported
    assert typing.get_args(contract.Outcome) == contract.REPORTED_OUTCOMES
    assert typing.get_args(contract.Lane) == contract.LANES
    assert typing.get_args(contract.Trigger) == contract.TRIGGERS
    assert contract.DEFAULT_LANE in contract.LANES


def test_the_default_lane_is_the_databases(conn: psycopg.Connection) -> None:
    conn.execute("SELECT tickq.sync_registry(%s)", [Jsonb({"settings": {}, "kinds": {
        "a": {"command": ["true"], "every": 300, "timeout": 30}}})])
    assert conn.execute("SELECT priority::text FROM tickq.job_kind WHERE name = 'a'"
                        ).fetchone() == (contract.DEFAULT_LANE,)


def test_weekdays_are_the_databases_in_iso_order(conn: psycopg.Connection) -> None:
    # The names the database writes for days 1..7...
    names = conn.execute("SELECT array_agg(tickq.weekday_name(d::smallint) ORDER BY d)"
                         " FROM generate_series(1, 7) AS d").fetchone()[0]
    assert names == list(contract.WEEKDAYS)
    # ...and the names it reads, each the day of that number.
    kinds = {f"on_{day}": {"command": ["true"], "at": ["06:00"], "on": [day], "timeout": 30}
             for day in contract.WEEKDAYS}
    conn.execute("SELECT tickq.sync_registry(%s)", [Jsonb({"settings": {}, "kinds": kinds})])
    stored = dict(conn.execute("SELECT name, on_days FROM tickq.job_kind WHERE name LIKE 'on_%'"
                               ).fetchall())
    assert stored == {f"on_{day}": [n] for n, day in enumerate(contract.WEEKDAYS, start=1)}


def test_the_output_tail_bound_is_the_domains(conn: psycopg.Connection) -> None:
    n = contract.OUTPUT_TAIL_CHARS
    assert conn.execute("SELECT char_length(repeat('é', %s)::tickq.output_tail)", [n]
                        ).fetchone() == (n,)
    with pytest.raises(psycopg.errors.CheckViolation):
        conn.execute("SELECT repeat('x', %s)::tickq.output_tail", [n + 1])


def test_the_agent_turn_bound_is_the_domains(conn: psycopg.Connection) -> None:
    n = contract.AGENT_TURN_BYTES
    text = '{"a": "' + "é" * ((n - 9) // 2) + "x" * ((n - 9) % 2) + '"}'
    assert len(text.encode()) == n
    assert conn.execute("SELECT octet_length(%s::jsonb::tickq.agent_turn_entry::text)", [text]
                        ).fetchone() == (n,)
    with pytest.raises(psycopg.errors.CheckViolation):
        conn.execute("SELECT %s::jsonb::tickq.agent_turn_entry", [text.replace('"a"', '"ab"')])


def test_what_the_agent_runner_bounds_fits_the_databases_bounds(conn: psycopg.Connection) -> None:
    """A transcript entry cut to the runner's bound is taken by the domain, even one whose
    numbers jsonb spells longer than json.dumps does; the answer it prints leaves room in the
    output tail for its last lines."""
    assert turns.ENTRY_BYTES < contract.AGENT_TURN_BYTES
    assert runner.ANSWER_CHARS < contract.OUTPUT_TAIL_CHARS
    entry = {"turn": 1, "usage": {f"n{i}": 1e300 for i in range(8)}, "answer": ""}
    entry["answer"] = "x" * (turns.ENTRY_BYTES - len(json.dumps(entry).encode()))
    kept = bounds.bounded(entry, turns.ENTRY_BYTES)
    assert kept == entry, "at the runner's bound, nothing is cut"
    assert conn.execute("SELECT octet_length(%s::jsonb::tickq.agent_turn_entry::text)",
                        [Jsonb(kept)]).fetchone()[0] > turns.ENTRY_BYTES


def test_the_copies_in_registry_and_host_equal_the_contract() -> None:
    """registry and host import nothing above them, so they keep their own copies."""
    assert (model.Kind._field_defaults["priority"] == model.Agents._field_defaults["priority"]
            == contract.DEFAULT_LANE)
    assert tail.MAX_TAIL_CHARS == contract.OUTPUT_TAIL_CHARS
    assert typing.get_args(process.Outcome) == contract.REPORTED_OUTCOMES
    assert spool.REPORTED_OUTCOMES == contract.REPORTED_OUTCOMES
