"""What one tick asks of the database: one function per tickq.* function or named query.

Each takes a connection (tickq.db.connect.Link.call hands it one) and typed arguments, and
returns rows by name. Refusals the tick branches on come back as tickq's own exceptions
(ClaimRefused, RegistryRefused); everything else psycopg raises is left to the Link, which
turns it into DatabaseUnavailable, NoAnswerInTime or DatabaseRefused.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, NamedTuple

import psycopg
from psycopg.rows import class_row, kwargs_row

from tickq.db.errors import ClaimRefused, QueueReadOnly, read_only
from tickq.db.migrator import load_query

# SQLSTATEs of the tickq API (sql/api/01_schedule.sql, 09_agents.sql) the tick branches on.
RUN_NOT_LIVE = "TQ001"
RUN_UNKNOWN = "TQ007"  # the database never had the run: a claim a failover lost
UNKNOWN_KIND = "TQ003"
NO_FREE_SLOT = "TQ005"
KIND_BUSY = "TQ006"
NOT_ARMED = "TQ030"  # an unarmed irreversible kind: its first run needs a person
UNKNOWN_AGENT = "TQ041"
CLAIM_REFUSALS = frozenset({UNKNOWN_KIND, NO_FREE_SLOT, KIND_BUSY, NOT_ARMED})


class Claim(NamedTuple):
    run_id: int
    kind: str
    attempt: int
    leased_until: datetime
    trigger: str
    lease_s: float | None = None  # how long the lease is, by the database's clock
    # The scheduled slots the run covers (job_run.slot_at, first_slot_at, slots_covered): none
    # for a manual run; a retry's are its first try's.
    slot_at: datetime | None = None
    first_slot_at: datetime | None = None
    slots_covered: int = 0


def _claim(run_trigger: str, **row: Any) -> Claim:
    return Claim(trigger=run_trigger, **row)


class RunReport(NamedTuple):
    """What a dispatcher reports of a finished run (and keeps in its spool when it cannot)."""

    run_id: int
    dispatcher: str
    outcome: str
    exit_code: int | None
    output_tail: str
    duration: float  # seconds


class Reported(NamedTuple):
    run_id: int
    kind: str
    outcome: str
    failure_streak: int
    next_due_at: datetime
    next_trigger: str


class LateReport(NamedTuple):
    run_id: int
    kind: str
    outcome: str
    verdict: str


class Lease(NamedTuple):
    """A live run's lease (tickq.live_leases)."""

    run_id: int
    kind: str
    leased_by: str
    leased_until: datetime


class Stale(NamedTuple):
    kind: str
    priority: str
    due_at: datetime
    waiting: timedelta


class Alert(NamedTuple):
    alert_id: int
    kind: str
    event: str
    condition: str
    failure_streak: int
    last_outcome: str | None
    output_tail: str | None


class Housekeeping(NamedTuple):
    lost: int
    runs_pruned: int
    drift_pruned: int
    alerts_pruned: int


class AgentOfKind(NamedTuple):
    """The agent a claim of `agent.<name>` runs: its id, and its watchdog in seconds."""

    id: int
    timeout_s: int


def _rows(conn: psycopg.Connection, factory: Any, name: str,
          params: dict[str, Any] | None = None) -> list[Any]:
    with conn.cursor(row_factory=factory) as cur:
        return cur.execute(load_query(name), params or {}).fetchall()


def claim_jobs(conn: psycopg.Connection, limit: int, dispatcher: str) -> list[Claim]:
    return _rows(conn, kwargs_row(_claim), "claim_jobs",
                 {"limit": limit, "dispatcher": dispatcher})


def claim_manual(
    conn: psycopg.Connection, kind: str, dispatcher: str, run_by: str | None = None
) -> Claim:
    """tickq.claim_manual; its refusals are ClaimRefused."""
    try:
        [claim] = _rows(conn, kwargs_row(_claim), "claim_manual",
                        {"kind": kind, "dispatcher": dispatcher, "run_by": run_by})
    except psycopg.Error as exc:
        if exc.sqlstate in CLAIM_REFUSALS:
            raise ClaimRefused(exc.sqlstate, exc.diag.message_primary or str(exc)) from exc
        raise
    return claim


def live_leases(conn: psycopg.Connection, run_ids: list[int]) -> list[Lease]:
    """The runs among `run_ids` still live, with their lease (tickq.live_leases)."""
    return _rows(conn, class_row(Lease), "live_leases", {"run_ids": run_ids})


def refuse_read_only(conn: psycopg.Connection) -> None:
    """QueueReadOnly when the server said at login (ParameterStatus, PostgreSQL 14 and later:
    no query) that this session cannot write; a server or pooler that does not say is caught
    by the first write's SQLSTATE 25006 instead."""
    if conn.info.parameter_status("in_hot_standby") == "on":
        raise QueueReadOnly(read_only("a standby in recovery: in_hot_standby = on"))
    if conn.info.parameter_status("default_transaction_read_only") == "on":
        raise QueueReadOnly(read_only("default_transaction_read_only = on"))


def start_run(conn: psycopg.Connection, run_id: int, dispatcher: str) -> None:
    conn.execute(load_query("start_run"), {"run_id": run_id, "dispatcher": dispatcher})


def report_run(conn: psycopg.Connection, result: RunReport) -> Reported:
    """A finished run's result, from the dispatcher that holds its lease (tickq.report_run)."""
    [row] = _rows(conn, class_row(Reported), "report_run", result._asdict())
    return row


def report_late_run(conn: psycopg.Connection, result: RunReport) -> LateReport:
    """A result kept in the host's spool while the database was away (tickq.report_late_run)."""
    [row] = _rows(conn, class_row(LateReport), "report_late_run", result._asdict())
    return row


def release_dead_lease(conn: psycopg.Connection, run_id: int, dispatcher: str) -> bool:
    [(released,)] = conn.execute(load_query("release_dead_lease"),
                                 {"run_id": run_id, "dispatcher": dispatcher}).fetchall()
    return bool(released)


def stale_due(conn: psycopg.Connection) -> list[Stale]:
    return _rows(conn, class_row(Stale), "stale_due")


def take_alerts(conn: psycopg.Connection) -> list[Alert]:
    """The alert events due now, each taken once across dispatchers."""
    return _rows(conn, class_row(Alert), "take_alerts")


def next_due_wait(conn: psycopg.Connection, within: float) -> timedelta | None:
    """How long until the next kind falls due, if one does within `within` seconds."""
    [(wait,)] = conn.execute(load_query("next_due"), {"within": within}).fetchall()
    return wait


def record_tick(conn: psycopg.Connection, dispatcher: str, host: str) -> None:
    conn.execute(load_query("record_tick"), {"dispatcher": dispatcher, "host": host})


def housekeeping(conn: psycopg.Connection) -> Housekeeping:
    """tickq.housekeeping; its caller gives the connection the registry's housekeeping_timeout
    as its statement timeout (tickq.db.connect.Link.retime)."""
    [row] = _rows(conn, class_row(Housekeeping), "housekeeping")
    return row


def chain_start(conn: psycopg.Connection, run_id: int, dispatcher: str) -> int:
    """The step a chain's run starts at: 1, or the first not yet ended ok in an earlier try."""
    [(first,)] = conn.execute(load_query("chain_start"),
                              {"run_id": run_id, "dispatcher": dispatcher}).fetchall()
    return int(first)


def report_step(
    conn: psycopg.Connection, *, run_id: int, dispatcher: str, n: int, name: str, outcome: str,
    exit_code: int | None, output_tail: str, duration: float,
) -> None:
    conn.execute(load_query("report_step"), {
        "run_id": run_id, "dispatcher": dispatcher, "n": n, "name": name, "outcome": outcome,
        "exit_code": exit_code, "output_tail": output_tail, "duration": duration})


class CancelAsked(NamedTuple):
    """A cancel asked of a run the dispatcher holds (tickq.cancels_requested)."""

    run_id: int
    cancel_by: str | None
    cancel_reason: str | None


def _asked(_: Any = None, **row: Any) -> CancelAsked:
    return CancelAsked(row["run_id"], row["cancel_by"], row["cancel_reason"])


def cancels_requested(
    conn: psycopg.Connection, dispatcher: str, run_ids: list[int]
) -> list[CancelAsked]:
    """The cancels asked of the runs `run_ids` this dispatcher holds; records that it asked."""
    return _rows(conn, kwargs_row(_asked), "cancels_requested",
                 {"dispatcher": dispatcher, "run_ids": run_ids})


def agent_for_kind(conn: psycopg.Connection, kind: str) -> AgentOfKind | None:
    """The agent a claim of `kind` runs; None when the kind has none (the agent was removed)."""
    try:
        rows = _rows(conn, class_row(AgentOfKind), "agent_for_kind", {"kind": kind})
    except psycopg.Error as exc:
        if exc.sqlstate != UNKNOWN_AGENT:
            raise
        return None
    return rows[0] if rows else None
