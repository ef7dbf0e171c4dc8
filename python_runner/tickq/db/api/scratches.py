"""The scratch databases a check simulates in (copies of a migrated template: tickq.db.scratch),
and what is loaded into them: the registry, synced as into a queue, and the queue's agents.
Nothing here touches the user's queue: `check` and `simulate` only read that one.
"""

from __future__ import annotations

import datetime as dt
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from psycopg import Connection
from psycopg.types.json import Jsonb

from tickq import db
from tickq.db import scratch as db_scratch
from tickq.db.api import registry as registry_api
from tickq.registry import Registry

# A simulation is one long statement by design, watched by whoever started it.
SIMULATE_STATEMENT_TIMEOUT = 1800  # seconds
ASIDE = -1  # the key of the scratch database made for other work than the simulation


@dataclass(frozen=True)
class SavedAgent:
    name: str
    fields: dict[str, Any]


@contextmanager
def scratch(server_url: str) -> Iterator[Connection]:
    """An autocommit connection to a scratch database in the migrated template's state
    (tickq.db.scratch: a pool database held until the block ends, else a copy dropped then)."""
    with db_scratch.scratch(server_url, db.Timeouts(statement=SIMULATE_STATEMENT_TIMEOUT)) as conn:
        yield conn


class Scratches:
    """The scratch databases of one check: `conn`, the first, and copies beside it (`beside`),
    each a database and connection of its own, so windows can be simulated at the same time.
    The first `ready` of them are made at once, in the background, while the caller does other
    work; any other when asked. A copy handed out for the first time holds nothing yet: its
    caller loads it as the first was loaded (`first_load`; the first's preloaded sync copied:
    `synced`), then as the moment asks. With
    `aside`, one more is made at once for other work than the simulation (`aside`: the
    capacity verdict)."""

    def __init__(self, server_url: str, ready: int, aside: bool = False) -> None:
        self.first_load: tuple[Registry, Sequence[SavedAgent]] | None = None
        self._preload: tuple[Registry, Future[str | None]] | None = None
        self._aside_load: tuple[Registry, Future[str | None]] | None = None
        self._server_url = server_url
        self._drops: list[Callable[..., Any]] = []  # each made copy's exit, which drops it
        self._lock = threading.Lock()
        self._handed: set[int] = set()
        self._making = ThreadPoolExecutor(max(1, ready) + aside, thread_name_prefix="tickq-scratch")
        self._copies: dict[int, Future[Connection]] = {}
        for n in [*range(max(1, ready)), *([ASIDE] if aside else [])]:
            self._copies[n] = self._making.submit(self._make, n)

    def _make(self, n: int) -> Connection:
        if n:  # after the first, which builds the template when it is missing
            self._copies[0].exception()
        made = scratch(self._server_url)
        conn = made.__enter__()
        with self._lock:
            self._drops.append(made.__exit__)
        return conn

    def preload(self, registry: Registry) -> None:
        """Sync `registry` into the first scratch database as soon as it is made, in the
        background, while the caller asks the queue what else to load (its agents:
        `preloaded`). The one `aside` is synced at the same time, on the core the first's sync
        leaves free (`aside_synced`), and what its sync left there is read for the copies
        beside the first (`synced`), so the first simulates as soon as it is synced; without
        one, it is read in the first."""
        aside = ASIDE in self._copies
        self._preload = (registry, self._making.submit(self._sync, 0, registry, not aside))
        if aside:
            self._aside_load = (registry, self._making.submit(self._sync, ASIDE, registry, True))

    def _sync(self, n: int, registry: Registry, read: bool) -> str | None:
        conn = self._copies[n].result()
        load(conn, registry)
        return state(conn) if read else None

    def preloaded(self, registry: Registry) -> bool:
        """Whether `preload` synced this very registry into the first database (waits for it,
        and raises what the sync raised)."""
        if self._preload is None or self._preload[0] is not registry:
            return False
        self._preload[1].result()
        return True

    def synced(self, conn: Connection, registry: Registry) -> bool:
        """Whether `preload` synced this very registry into the first database; then `conn`, a
        scratch database in the template's state beside it, now holds what the sync left in the
        one aside (else in the first), copied (`restore`: the same rows, a sync's validation and
        its writes not done again). Load the agents after it as into the first."""
        if not self.preloaded(registry):
            return False
        read = self._aside_load or self._preload
        assert read is not None
        held = read[1].result()
        assert held is not None
        restore(conn, held)
        return True

    def aside_synced(self, registry: Registry) -> Connection:
        """`aside`, once `preload` synced this very registry into it too (waits for it, and
        raises what the sync raised); else as it is."""
        if self._aside_load is not None and self._aside_load[0] is registry:
            self._aside_load[1].result()
        return self.aside()

    @property
    def conn(self) -> Connection:
        """The first scratch database (waits for it to be made; ScratchUnavailable if it cannot
        be)."""
        return self._copies[0].result()

    def aside(self) -> Connection:
        """The scratch database made for other work than the simulation (waits for it)."""
        return self._copies[ASIDE].result()

    def beside(self, n: int) -> tuple[Connection, bool]:
        """Copy `n` beside the first (1, 2, ...), and whether it is handed out for the first
        time. Each copy is for one thread at a time."""
        with self._lock:
            if n not in self._copies:  # beyond the ones made at once
                self._copies[n] = self._making.submit(self._make, n)
            copy = self._copies[n]
            fresh = n not in self._handed
            self._handed.add(n)
        return copy.result(), fresh

    def settle(self) -> None:
        """Wait for the copies still being made (so every one is dropped with the others)."""
        self._making.shutdown(wait=True, cancel_futures=True)

    def drop(self) -> None:
        """Let go of every scratch database taken, all at once (a copy of its own is dropped,
        each DROP DATABASE on its own connection: a check waits for the slowest, not for their
        sum); the first error is raised after all were tried."""
        with self._lock:
            drops, self._drops = self._drops, []
        if not drops:
            return
        with ThreadPoolExecutor(len(drops), thread_name_prefix="tickq-drop") as pool:
            done = [pool.submit(exit_, None, None, None) for exit_ in drops]
        for future in done:
            future.result()

    def cancel(self) -> None:
        """Cancel what every copy made is running (a check interrupted)."""
        with self._lock:
            made = [c.result() for c in self._copies.values() if c.done() and not c.exception()]
        for conn in made:
            conn.cancel_safe()

    def cancel_until(self, work: Future[Any]) -> None:
        """Cancel what the copies run until `work` (a thread simulating in them) has ended: a
        cancel that falls between two of its statements is sent again. Nothing to do for work
        that ended."""
        while not work.done():
            self.cancel()
            wait([work], timeout=0.1)


def put_back(conn: Connection) -> None:
    """Put a pool database the check is done with back now (tickq.db.scratch.put_back)."""
    db_scratch.put_back(conn)


@contextmanager
def scratches(server_url: str, ready: int = 1, aside: bool = False) -> Iterator[Scratches]:
    """Scratch databases for a check, `ready` of them (and one `aside`) made at once in the
    background (`Scratches`); all let go of when the block ends."""
    sims = Scratches(server_url, ready, aside)
    try:
        yield sims
    finally:
        try:
            sims.settle()
        finally:
            sims.drop()


def load(conn: Connection, registry: Registry, agents: Sequence[SavedAgent] = (),
         now: dt.datetime | None = None) -> None:
    """Make the scratch queue match `registry` (a later registry replaces an earlier one) and
    hold `agents`; synced `now` (default: the database's clock)."""
    registry_api.sync_registry(conn, registry, now=now)
    load_agents(conn, agents)


def state(conn: Connection) -> str:
    """What the scratch database behind `conn` holds that the template did not (its tables and
    sequences that differ: tickq.scratch_state), as JSON text for `restore`."""
    row = conn.execute(db.load_query("scratch_state")).fetchone()
    assert row is not None
    return str(row[0])


def restore(conn: Connection, held: str) -> None:
    """Make the scratch database behind `conn` hold what `state` read in another (every other
    table and sequence as the template had it: tickq.scratch_restore)."""
    conn.execute(db.load_query("scratch_restore"), {"state": held})


def load_agents(conn: Connection, agents: Sequence[SavedAgent]) -> None:
    """Save the queue's `agents` in the scratch queue, beside the registry's kinds."""
    for agent in agents:
        conn.execute(db.load_query("save_agent_fields"),
                     {"name": agent.name, "fields": Jsonb(agent.fields)})
