"""One tick: sync the registry, claim what is due, run it under watchdogs, report, refill.

The dispatcher holds no SQL of its own (queries live in ``tickq/queries``) and decides nothing
the database should decide: which kinds run, in what order and how many at once is
``tickq.claim_jobs``; what happens after a result is ``tickq.report_run``. Its own jobs are
to run the registry's command for each claim (never anything from a database row), to keep
slots busy while work is due, and never to drop a result silently.
"""

from __future__ import annotations

import json
import os
import queue
import socket
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import psycopg
from psycopg.types.json import Jsonb

from tickq import db
from tickq.db import verdict as registry_db
from tickq.db.api.registry import Drift
from tickq.db.errors import ClaimRefused, DatabaseUnavailable, RegistryRefused
from tickq.host import programs
from tickq.host.ledger import Ledger
from tickq.host.process import RunResult, run_command
from tickq.host.spool import Spool
from tickq.log import EventLog
from tickq.registry import AGENT_PREFIX, Registry
from tickq.registry.durations import format_duration

__all__ = ["ClaimRefused", "DatabaseUnavailable", "Dispatcher", "RegistryRefused"]

# SQLSTATEs of the tickq API (sql/api/01_schedule.sql)
RUN_NOT_LIVE = "TQ001"
UNKNOWN_KIND = "TQ003"
NO_FREE_SLOT = "TQ005"
KIND_BUSY = "TQ006"
QUERY_CANCELED = "57014"  # statement_timeout
LOCK_NOT_AVAILABLE = "55P03"  # lock_timeout
NOT_ARMED = "TQ030"  # an unarmed irreversible kind: its first run needs a person

# The built-in kind tickq.sync_registry adds to every queue (sql/api/02_sync.sql).
HOUSEKEEPING = "tickq.housekeeping"
UNKNOWN_AGENT = "TQ041"
# The database URL handed to the agent runner alone (tickq.agents.runner.DATABASE_ENV).
AGENT_DATABASE_ENV = "TICKQ_AGENT_DATABASE_URL"


@dataclass(frozen=True)
class Claim:
    run_id: int
    kind: str
    attempt: int
    leased_until: Any
    trigger: str
    lease_s: float | None = None  # how long the lease is, by the database's clock


@dataclass
class TickSummary:
    claimed: int = 0
    outcomes: Counter[str] = field(default_factory=Counter)
    drift: int = 0
    stale: int = 0
    unreported: int = 0
    orphans: int = 0
    late_reports: int = 0
    interrupted: bool = False


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _registry_units(unit: str | None, value: Any) -> Any:
    """A drift value as the registry writes it: 300 seconds of `every` is "5m"."""
    if unit == "s" and isinstance(value, int | float) and value >= 1:
        return format_duration(int(value))
    return value


def default_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


class Dispatcher:
    def __init__(
        self,
        url: str,
        registry: Registry,
        log: EventLog,
        *,
        name: str | None = None,
        stop_event: threading.Event | None = None,
        grace: float = 5.0,
        report_attempts: int = 8,
        reconnect_delay: float = 0.5,
        refill_every: float = 10.0,
        ledger: Ledger | None = None,
    ) -> None:
        self.url = url
        self.registry = registry
        self.log = log
        self.name = name or default_name()
        self.stop_event = stop_event or threading.Event()
        self.grace = grace
        self.report_attempts = report_attempts
        self.reconnect_delay = reconnect_delay
        self.refill_every = refill_every
        self.ledger = ledger or Ledger()
        self.spool = Spool(self.ledger.folder)
        self.timeouts = db.timeouts_of(registry.settings)
        self._conn: psycopg.Connection | None = None
        # The earliest retry one of this tick's reports scheduled: claim again then, not only
        # when a run finishes or every refill_every seconds.
        self._retry_at: datetime | None = None

    # ------------------------------------------------------------ the database

    def _connection(self) -> psycopg.Connection:
        if self._conn is None or self._conn.closed or self._conn.broken:
            try:
                self._conn = db.connect(self.url, timeouts=self.timeouts)
            except psycopg.OperationalError as exc:
                raise DatabaseUnavailable(str(exc).strip()) from exc
        return self._conn

    def _query(self, name: str, params: dict[str, Any]) -> list[tuple]:
        try:
            return self._connection().execute(db.load_query(name), params).fetchall()
        except psycopg.OperationalError as exc:
            if exc.sqlstate in (QUERY_CANCELED, LOCK_NOT_AVAILABLE):
                # statement_timeout or lock_timeout (the registry's db_* settings) fired.
                raise DatabaseUnavailable(f"no answer in time: {_first_line(exc)}") from exc
            if self._conn is not None and not self._conn.broken and not self._conn.closed:
                raise  # a server-side error, not a lost connection
            raise DatabaseUnavailable(str(exc).strip()) from exc

    def _with_reconnect(self, what: str, action: Callable[[], Any]) -> Any:
        """Run ``action``; on a lost connection reconnect and retry, a bounded number of times."""
        delay = self.reconnect_delay
        for attempt in range(1, self.report_attempts + 1):
            try:
                return action()
            except DatabaseUnavailable as exc:
                if attempt == self.report_attempts:
                    raise
                self.log.warning("db.reconnect", doing=what, attempt=attempt, error=str(exc))
                time.sleep(delay)
                delay = min(delay * 2, 10.0)
        raise AssertionError("unreachable")

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()

    def migrate(self, conn: psycopg.Connection | None = None) -> list[str]:
        try:
            applied = db.migrate(conn or self._connection())
        except psycopg.OperationalError as exc:  # a timeout, or the connection went away
            raise DatabaseUnavailable(f"while migrating: {_first_line(exc)}") from exc
        if applied:  # one line however many files: a fresh database applies them all
            migrations = [step for step in applied if step.startswith("migration ")]
            self.log.event("db.migrated", migrations=len(migrations),
                           api=len(applied) > len(migrations), last=applied[-1])
        return applied

    # ------------------------------------------------------------ steps

    def stop_orphans(self) -> int:
        """Stop the commands a dead dispatcher on this host left running (see tickq.orphans).
        Runs before any claim, so an orphan is gone before its kind can be claimed again."""
        problem = self.ledger.problem()
        if problem:
            self.log.error("ledger.unusable", problem=problem)
        dead = self.ledger.reap_dead(self.grace)
        for s in dead:
            if s.signal is not None:
                self.log.warning(
                    "run.orphan_stopped", kind=s.entry.get("kind"), run_id=s.entry.get("run_id"),
                    pgid=s.pgid, signal=s.signal, dead_dispatcher_pid=s.entry.get("dispatcher_pid"),
                )
            self._release_dead_lease(s.entry)
        return sum(1 for s in dead if s.signal is not None)

    def _release_dead_lease(self, entry: dict[str, Any]) -> None:
        """The dispatcher of a ledger entry is provably dead (same host, its pid gone or
        reused) and its command is gone too: nobody will report the run, so it becomes `lost`
        now rather than when the lease expires (which holds its slot, and refuses `tickq run`,
        for up to the longest timeout)."""
        run_id, holder = entry.get("run_id"), entry.get("dispatcher")
        if not isinstance(run_id, int) or not isinstance(holder, str):
            return  # an alert command's entry: no lease
        try:
            [(released,)] = self._query(
                "release_dead_lease", {"run_id": run_id, "dispatcher": holder}
            )
        except (DatabaseUnavailable, psycopg.Error) as exc:
            self.log.warning("run.release_failed", run_id=run_id, dead_dispatcher=holder,
                             error=str(exc).strip())
            return
        if released:
            self.log.warning("run.lost_released", kind=entry.get("kind"), run_id=run_id,
                             dead_dispatcher=holder)

    def sync(self) -> list[Drift]:
        """Make the queue match the registry; log and return each drift found."""
        # The dispatcher's name goes along: the database records which registry it holds (a
        # fingerprint) and the lease its own timeouts need, and warns when hosts disagree.
        doc = {**self.registry.to_sync_json(), "dispatcher": self.name}
        try:
            drift = [Drift(*row) for row in self._query("sync_registry", {"registry": Jsonb(doc)})]
        except psycopg.Error as exc:
            # The database owns the rules on values: its refusal comes back as every problem.
            if not registry_db.is_refusal(exc):
                raise
            found = registry_db.problems(self._connection(), self.registry, exc)
            raise RegistryRefused(found) from exc
        for d in drift:
            if d.kind is None and d.field == "registry":
                self.log.warning(
                    "registry.conflict", dispatcher=self.name, other=d.stored_value["dispatcher"],
                    other_synced_at=d.stored_value["synced_at"],
                    fingerprint=d.registry_value["fingerprint"],
                    other_fingerprint=d.stored_value["fingerprint"],
                    hint="dispatchers on two hosts sync different registry files; each sync "
                         "undoes the other's: give them the same file",
                )
                continue
            # An edit of the registry file is news; a row changed behind its back is a warning.
            level = "info" if d.registry_edit else "warning"
            if d.changed is not None:
                # Digests only, and even those say nothing to a reader: name what changed.
                self.log.event("registry.drift", level=level, kind=d.kind, field=d.field,
                               changed=",".join(d.changed), registry_edit=d.registry_edit)
                continue
            self.log.event(
                "registry.drift", level=level, kind=d.kind, field=d.field,
                stored=_registry_units(d.unit, d.stored_value),
                registry=_registry_units(d.unit, d.registry_value), registry_edit=d.registry_edit,
            )
        return drift

    def warn_stale(self) -> list[tuple]:
        rows = self._query("stale_due", {})
        for kind, priority, due_at, waiting in rows:
            self.log.warning(
                "kind.stale", kind=kind, priority=priority, due_at=due_at.isoformat(),
                waiting_s=round(waiting.total_seconds()),
            )
        return rows

    def claim(self, limit: int) -> list[Claim]:
        rows = self._query("claim_jobs", {"limit": limit, "dispatcher": self.name})
        claims = [Claim(*row) for row in rows]
        for c in claims:
            self.log.event(
                "run.claimed", kind=c.kind, run_id=c.run_id, attempt=c.attempt, trigger=c.trigger
            )
        return claims

    def claim_kind(self, kind: str, run_by: str | None = None) -> Claim:
        """A manual run; `run_by` is the person who confirmed it at a terminal, which the first
        run of an irreversible kind needs (and whose success arms the kind)."""
        try:
            rows = self._query(
                "claim_kind", {"kind": kind, "dispatcher": self.name, "run_by": run_by}
            )
        except psycopg.Error as exc:
            if exc.sqlstate in (UNKNOWN_KIND, NO_FREE_SLOT, KIND_BUSY, NOT_ARMED):
                raise ClaimRefused(exc.sqlstate, exc.diag.message_primary or str(exc)) from exc
            raise
        c = Claim(*rows[0])
        self.log.event(
            "run.claimed", kind=c.kind, run_id=c.run_id, attempt=c.attempt, trigger=c.trigger
        )
        return c

    def execute(
        self, claim: Claim, on_output: Callable[[bytes], None] | None = None
    ) -> RunResult:
        """Run the registry's command for a claim (this is the only place a command starts)."""
        if claim.kind == HOUSEKEEPING:
            return self._housekeeping()
        if claim.kind.startswith(AGENT_PREFIX):
            return self._agent(claim)
        kind = self.registry.kinds.get(claim.kind)
        if kind is None:
            note = (
                f"[tickq: kind {claim.kind!r} is not in the registry {self.registry.path}; "
                "nothing was run]\n"
            )
            return RunResult("failed", None, note, 0.0, None)
        if claim.lease_s is not None and kind.timeout > claim.lease_s:
            # Past the lease the kind may be claimed again while this copy still runs.
            note = (
                f"[tickq: not run: its timeout in {self.registry.path} ({kind.timeout}s) is longer "
                f"than the lease of this claim ({claim.lease_s:.0f}s); another dispatcher synced "
                "a different registry]\n"
            )
            return RunResult("failed", None, note, 0.0, None)
        # The command learns which run it is; it never learns anything else from the database.
        env = {
            **kind.env,
            "TICKQ_KIND": claim.kind,
            "TICKQ_RUN_ID": str(claim.run_id),
            "TICKQ_ATTEMPT": str(claim.attempt),
            "TICKQ_TRIGGER": claim.trigger,
        }
        # Relative command paths and the default working directory are the registry's folder.
        if kind.steps:
            from tickq.dispatch.chain import run_chain

            return run_chain(self, claim, kind, env, kind.cwd)
        start = programs.resolve(kind.command, self.registry.path.resolve().parent, kind.cwd,
                                 kind.env)
        return run_command(
            start.argv,
            cwd=start.cwd,
            env=env,
            timeout=kind.timeout,
            grace=self.grace,
            stop_event=self.stop_event,
            ledger=self.ledger,
            labels={"kind": claim.kind, "run_id": claim.run_id, "dispatcher": self.name},
            on_output=on_output,
        )

    def _agent(self, claim: Claim) -> RunResult:
        """An agent's run: the registry's agent runner with the agent's id as its one argument.
        The id and the watchdog are all that comes from the database, checked here; the prompt
        and the rest of the agent are data the runner reads itself."""
        agents = self.registry.agents
        if agents is None:
            note = (f"[tickq: {claim.kind} is an agent but the registry {self.registry.path} has "
                    "no [agents] section; nothing was run]\n")
            return RunResult("failed", None, note, 0.0, None)
        try:
            # A connection of its own: this runs in the run's thread, beside the tick's queries.
            with db.connect(self.url) as conn:
                row = conn.execute(db.load_query("agent_for_kind"), {"kind": claim.kind}).fetchone()
        except psycopg.Error as exc:
            if exc.sqlstate != UNKNOWN_AGENT:
                raise
            note = f"[tickq: {claim.kind} has no agent (removed?); nothing was run]\n"
            return RunResult("failed", None, note, 0.0, None)
        agent_id, timeout = row if row else (None, None)
        if type(agent_id) is not int or agent_id <= 0 or type(timeout) is not int or timeout <= 0:
            note = f"[tickq: {claim.kind}: agent id {agent_id!r} is not valid; nothing was run]\n"
            return RunResult("failed", None, note, 0.0, None)
        env = {
            "TICKQ_KIND": claim.kind,
            "TICKQ_RUN_ID": str(claim.run_id),
            "TICKQ_ATTEMPT": str(claim.attempt),
            "TICKQ_TRIGGER": claim.trigger,
            "TICKQ_REGISTRY": str(self.registry.path.resolve()),
            AGENT_DATABASE_ENV: self.url,
        }
        if agents.api_key_env and agents.api_key_env in os.environ:
            env[agents.api_key_env] = os.environ[agents.api_key_env]
        return run_command(
            [*agents.runner, str(agent_id)],
            cwd=self.registry.path.resolve().parent,
            env=env,
            # The registry's cap holds even if the kind's row was edited by hand (tickq.load_agent).
            timeout=timeout,
            grace=self.grace,
            stop_event=self.stop_event,
            ledger=self.ledger,
            labels={"kind": claim.kind, "run_id": claim.run_id, "dispatcher": self.name},
        )

    def _housekeeping(self) -> RunResult:
        """The built-in kind: SQL on a connection of its own, bounded like a watchdog would."""
        started = time.monotonic()
        try:
            with db.connect(self.url, timeouts=self.timeouts) as conn:
                conn.execute("SELECT set_config('statement_timeout', %s, false)",
                             (f"{self.registry.settings.housekeeping_timeout}s",))
                lost, runs, drift, alerts = conn.execute(db.load_query("housekeeping")).fetchone()
        except psycopg.Error as exc:
            note = f"[tickq: housekeeping failed: {exc}]\n"
            return RunResult("failed", None, note, time.monotonic() - started, None)
        text = f"lost={lost} runs_pruned={runs} drift_pruned={drift} alerts_pruned={alerts}\n"
        return RunResult("ok", 0, text, time.monotonic() - started, None)

    def send_alerts(self) -> list[threading.Thread]:
        """Take the alert events due now (each once across dispatchers, kept in SQL) and run the
        registry's alert command for each in a thread of its own, with the event on stdin."""
        command = self.registry.settings.alert_command
        if not command:
            return []
        try:
            rows = self._query("take_alerts", {})
        except DatabaseUnavailable as exc:
            self.log.error("alert.unavailable", error=str(exc))
            return []
        threads = []
        for alert_id, kind, event, condition, streak, last_outcome, tail in rows:
            doc = {
                "alert_id": alert_id, "kind": kind, "event": event, "condition": condition,
                "failure_streak": streak, "last_outcome": last_outcome, "output_tail": tail,
                "dispatcher": self.name,
            }
            self.log.warning("alert.raised" if event != "recovered" else "alert.recovered",
                             kind=kind, condition=condition, failure_streak=streak)
            thread = threading.Thread(target=self._alert, args=(command, doc), daemon=True)
            thread.start()
            threads.append(thread)
        return threads

    def _alert(self, command: tuple[str, ...], doc: dict[str, Any]) -> None:
        settings = self.registry.settings
        result = run_command(
            programs.resolve(command, self.registry.path.resolve().parent).argv,
            cwd=self.registry.path.resolve().parent, timeout=settings.alert_timeout,
            grace=2.0, stdin_data=json.dumps(doc).encode(), ledger=self.ledger,
            labels={"kind": doc["kind"], "alert_id": doc["alert_id"], "dispatcher": self.name},
        )
        fields = {"kind": doc["kind"], "alert_event": doc["event"], "outcome": result.outcome}
        if result.outcome == "ok":
            self.log.event("alert.sent", **fields)
        else:
            self.log.error("alert.failed", **fields, exit_code=result.exit_code,
                           output_tail=result.output_tail[-1000:])

    def _join_alerts(self, threads: list[threading.Thread]) -> None:
        """Wait for alert programs, each already bounded by its own timeout."""
        deadline = time.monotonic() + self.registry.settings.alert_timeout + 5.0
        for thread in threads:
            thread.join(max(0.0, deadline - time.monotonic()))

    def report(self, claim: Claim, result: RunResult, *, in_transaction: bool = False) -> bool:
        """Report a result, reconnecting as needed. False when it could not be recorded.

        `in_transaction`: the caller holds a transaction (see `_report_and_refill`); the report
        runs in a savepoint, so a refusal does not undo the rest, and a lost connection is
        raised for the caller to handle, not retried here."""
        params = {
            "run_id": claim.run_id,
            "dispatcher": self.name,
            "outcome": result.outcome,
            "exit_code": result.exit_code,
            "output_tail": result.output_tail,
            "duration": result.duration,
        }
        fields = {
            "kind": claim.kind, "run_id": claim.run_id, "outcome": result.outcome,
            "exit_code": result.exit_code, "duration_s": round(result.duration, 3),
        }
        try:
            if in_transaction:
                with self._connection().transaction():
                    rows = self._query("report_run", params)
            else:
                rows = self._with_reconnect("report", lambda: self._query("report_run", params))
        except DatabaseUnavailable as exc:
            if in_transaction:
                raise
            # Kept on the host and reported by the next tick (tickq.spool), even if the lease
            # expires into `lost` meanwhile.
            try:
                path = self.spool.save({**params, "kind": claim.kind})
            except OSError as spool_error:
                # Never silent: the whole result goes to the log; the lease will expire.
                self.log.error(
                    "run.unreported", **fields, error=str(exc), spool_error=str(spool_error),
                    output_tail=result.output_tail[-2000:],
                )
                return False
            self.log.error("run.spooled", **fields, error=str(exc), path=str(path))
            return False
        except psycopg.Error as exc:
            # Refused (TQ001: no longer live) or any other database error: logged whole, and the
            # tick goes on so the other commands it runs are still watched and reported.
            event = "run.report_refused" if exc.sqlstate == RUN_NOT_LIVE else "run.report_failed"
            self.log.error(
                event, **fields, sqlstate=exc.sqlstate, error=exc.diag.message_primary or str(exc),
                output_tail=result.output_tail[-2000:],
            )
            return False
        _run_id, _kind, outcome, streak, next_due_at, next_trigger = rows[0]
        if next_trigger == "retry" and (self._retry_at is None or next_due_at < self._retry_at):
            self._retry_at = next_due_at
        level = "info" if outcome == "ok" else "warning"
        self.log.event(
            "run.finished", level=level, **fields, failure_streak=streak,
            next_due_at=next_due_at.isoformat(), next_trigger=next_trigger,
        )
        return True

    def replay_spool(self) -> int:
        """Report the results this host kept while the database was away (tickq.spool); return
        how many. A lost connection stops the replay (the rest stays spooled)."""
        done = 0
        for spooled in self.spool.pending():
            r = spooled.result
            params = {key: r.get(key) for key in
                      ("run_id", "dispatcher", "outcome", "exit_code", "output_tail", "duration")}
            fields = {"kind": r.get("kind"), "run_id": r.get("run_id"), "outcome": r.get("outcome")}
            try:
                [row] = self._query("report_late_run", params)
            except psycopg.Error as exc:
                # Refused for good (a value the database rejects): logged whole, not retried.
                self.log.error("run.late_report_failed", **fields, sqlstate=exc.sqlstate,
                               error=_first_line(exc),
                               output_tail=str(r.get("output_tail"))[-2000:])
                self.spool.forget(spooled)
                continue
            self.log.warning("run.late_report", **fields, verdict=row[3])
            self.spool.forget(spooled)
            done += 1
        return done

    def _report_and_refill(
        self, claim: Claim, result: RunResult, free: int
    ) -> tuple[bool, list[Claim] | None]:
        """Report a finished run and claim into the freed slots in one transaction: one commit
        per finish instead of two. If the connection is lost, the report is retried on its own
        (with reconnects) and the claims are None: the caller claims again later."""
        if free <= 0:
            return self.report(claim, result), []
        try:
            with self._connection().transaction():
                reported = self.report(claim, result, in_transaction=True)
                claims = self.claim(free)
            return reported, claims
        except (DatabaseUnavailable, psycopg.OperationalError) as exc:
            self.log.warning("db.refill_failed", kind=claim.kind, run_id=claim.run_id,
                             error=str(exc).strip())
            return self.report(claim, result), None

    def _start(
        self, claim: Claim, results: queue.Queue,
        on_output: Callable[[bytes], None] | None = None,
    ) -> None:
        def work() -> None:
            try:
                result = self.execute(claim, on_output)
            except BaseException as exc:  # noqa: BLE001 - a result must always come back
                note = f"[tickq: dispatcher error: {exc!r}]\n"
                result = RunResult("failed", None, note, 0.0, None)
            results.put((claim, result))

        threading.Thread(target=work, name=f"run-{claim.kind}", daemon=True).start()
        try:
            self._query("start_run", {"run_id": claim.run_id, "dispatcher": self.name})
        except (DatabaseUnavailable, psycopg.Error) as exc:
            self.log.warning("run.start_unrecorded", kind=claim.kind, run_id=claim.run_id,
                             error=str(exc))

    # ------------------------------------------------------------ one tick

    def tick(self) -> TickSummary:
        """Sync, warn, then claim and run until nothing this tick holds runs and nothing more
        can be claimed. Claims again each time a run finishes."""
        summary = TickSummary()
        deadline = self._tick_deadline()
        summary.orphans = self.stop_orphans()
        summary.drift = len(self.sync())
        summary.late_reports = self.replay_spool()
        summary.stale = len(self.warn_stale())
        alerts = self.send_alerts()
        slots = self.registry.settings.slots
        results: queue.Queue[tuple[Claim, RunResult]] = queue.Queue()
        running: dict[int, Claim] = {}
        can_claim, claim_now = True, True
        last_claim = 0.0
        while True:
            if self.stop_event.is_set():
                summary.interrupted = True
                can_claim = False
            free = slots - len(running)
            # Claim at the start, each time a run finishes, and every `refill_every` seconds while
            # runs go on (a kind can come due, or a retry's backoff pass, during a long run).
            claim_now = (claim_now or time.monotonic() - last_claim >= self.refill_every
                         or self._retry_due())
            if can_claim and free > 0 and claim_now:
                claim_now, last_claim = False, time.monotonic()
                try:
                    claims = self.claim(free)
                except DatabaseUnavailable as exc:
                    if not running:
                        raise
                    # Tried again every refill_every while runs go on: the database may be back.
                    self.log.error("tick.claim_failed", error=str(exc))
                    claims = []
                for c in claims:
                    running[c.run_id] = c
                    self._start(c, results)
                summary.claimed += len(claims)
            if not running:
                if can_claim and not self.stop_event.is_set() and self._wait_for_retry(deadline):
                    claim_now = True
                    continue
                summary.interrupted = summary.interrupted or self.stop_event.is_set()
                break
            try:
                claim, result = results.get(timeout=0.2)
            except queue.Empty:
                continue
            del running[claim.run_id]
            summary.outcomes[result.outcome] += 1
            refill = can_claim and not self.stop_event.is_set()
            free = slots - len(running) if refill else 0
            reported, claims = self._report_and_refill(claim, result, free)
            if not reported:
                summary.unreported += 1
            if claims is None:
                claim_now = True  # the refill did not happen: claim at the top of the loop
            elif refill:
                last_claim = time.monotonic()
                for c in claims:
                    running[c.run_id] = c
                    self._start(c, results)
                summary.claimed += len(claims)
        alerts += self.send_alerts()
        self._join_alerts(alerts)
        self._record_tick()
        return summary

    def _record_tick(self) -> None:
        """The health check's evidence that the timer fires (`tickq status --check`)."""
        try:
            self._query("record_tick", {"dispatcher": self.name, "host": socket.gethostname()})
        except (DatabaseUnavailable, psycopg.Error) as exc:
            self.log.warning("tick.unrecorded", error=str(exc).strip())

    def _retry_due(self) -> bool:
        """Whether a retry this tick's reports scheduled has come due (then forgotten: the
        claim that follows takes it, or another dispatcher did)."""
        if self._retry_at is None or datetime.now(UTC) < self._retry_at:
            return False
        self._retry_at = None
        return True

    def _tick_deadline(self) -> float:
        """When the next tick would start (monotonic clock): the next clock-aligned tick, as the
        timers tickq installs fire, and never more than one tick length from now."""
        tick = self.registry.settings.tick
        wall = time.time()
        to_boundary = (wall // tick + 1) * tick - wall
        return time.monotonic() + min(tick, to_boundary)

    def _wait_for_retry(self, deadline: float) -> bool:
        """With nothing running: wait for a retry that falls due before the next tick would
        start (a 30-second retry runs 30 seconds later, not a tick later). True when one is
        due now; False when there is none, or the stop event came first."""
        within = deadline - time.monotonic()
        if within <= 0:
            return False
        try:
            [(wait,)] = self._query("next_due", {"within": within})
        except DatabaseUnavailable:
            return False
        if wait is None:
            return False
        seconds = max(0.0, wait.total_seconds()) + 0.05  # claims take what is due at or before now
        self.log.event("tick.waiting", for_s=round(seconds, 1), reason="retry")
        return not self.stop_event.wait(seconds)

    def run_now(
        self, kind: str, on_output: Callable[[bytes], None] | None = None,
        confirm: Callable[[str], str | None] | None = None,
    ) -> tuple[Claim, RunResult]:
        """A manual run of one kind through the same claim path (counted against the slots);
        `on_output` gets the command's output as it comes. When the database refuses it because
        the kind is irreversible and unarmed, `confirm` (given the refusal) names the person who
        confirmed the run, or refuses by raising."""
        self.stop_orphans()
        self.sync()
        self.replay_spool()
        try:
            claim = self.claim_kind(kind)
        except ClaimRefused as exc:
            if exc.sqlstate != NOT_ARMED or confirm is None:
                raise
            claim = self.claim_kind(kind, run_by=confirm(str(exc)))
        results: queue.Queue[tuple[Claim, RunResult]] = queue.Queue()
        self._start(claim, results, on_output)
        _claim, result = results.get()
        self.report(claim, result)
        return claim, result
