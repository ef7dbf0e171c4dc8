"""The registry's door to the database: `tickq.sync_registry` and `tickq.registry_problems`.

The rules on values (bounds, kind names, time zones, weekdays, times of day, repeats) have one
owner, the database: `tickq.sync_registry` refuses the first value it cannot take (TQ002), and
`tickq.registry_problems` lists every such value by the same rules, so a registry file and the
JSON a script sends get the same verdict. The drift a sync finds comes back classified.
"""

from __future__ import annotations

import contextlib
import socket
from datetime import datetime
from typing import Any, NamedTuple

import psycopg
from psycopg.rows import class_row, dict_row
from psycopg.types.json import Jsonb

from tickq.db.connect import DEFAULT_TIMEOUTS, Timeouts, timeouts_of
from tickq.db.errors import RegistryRefused
from tickq.db.migrator import load_query
from tickq.registry import Problem, Registry
from tickq.registry.place import as_given, resolved

INVALID_REGISTRY = "TQ002"
OTHER_PROJECT = "TQ090"  # another project's sync would retire kinds of the queue


class Drift(NamedTuple):
    """One difference a sync found, as `tickq.sync_registry` classified it."""

    kind: str | None  # None for a setting, or a conflict between hosts (field "registry")
    field: str
    stored_value: Any
    registry_value: Any
    registry_edit: bool  # an edit of the registry file, not a row changed behind its back
    changed: list[str] | None  # field "env": the names whose values differ
    unit: str | None  # "s": the values are durations in seconds


def is_refusal(exc: psycopg.Error) -> bool:
    """TQ002, or a data exception (class 22: a value out of a type's range)."""
    state = exc.sqlstate or ""
    return state == INVALID_REGISTRY or state.startswith("22")


def file_key(kind: str | None, key: str | None) -> str | None:
    """The key as the registry file spells it: a setting is "settings.<key>"."""
    if key in (None, "*", "name"):
        return None
    if kind is not None or key in ("agents", "pools") or key.startswith(("agents.", "pools.")):
        return key
    return f"settings.{key}"


_sent: list[tuple[Registry, dict[str, Any]]] = []  # the last registry's JSON, and the registry


def sync_json(registry: Registry) -> dict[str, Any]:
    """`registry.to_sync_json()`, built once for the last registry asked about: a tick sends it
    twice (its verdict, then its sync). A copy: callers add their own keys."""
    last = _sent[0] if _sent else None  # read once: another thread may replace it
    if last is None or last[0] is not registry:
        last = (registry, registry.to_sync_json())
        _sent[:] = [last]
    return dict(last[1])


def sent_json(registry: Registry, *, from_file: bool = False,
              replace_queue: bool = False) -> dict[str, Any]:
    """The registry's JSON as a sync sends it: with where its file is (`from_file`: so the
    queue can tell another project's sync) and "replace_queue" when asked."""
    doc = sync_json(registry)
    if from_file:
        doc["source"] = source(registry)
    if replace_queue:
        doc["replace_queue"] = True
    return doc


def _problem_rows(conn: psycopg.Connection, doc: dict[str, Any]) -> list[dict[str, Any]]:
    with conn.cursor(row_factory=dict_row) as cur:
        return cur.execute(load_query("registry_problems"), {"registry": Jsonb(doc)}).fetchall()


def _problems(registry: Registry, rows: list[dict[str, Any]]) -> list[Problem]:
    file = str(registry.path)
    return [Problem(file, r["kind"], file_key(r["kind"], r["key"]), r["problem"]) for r in rows]


def _own(rows: list[dict[str, Any]]) -> bool:
    """Whether `rows` hold a problem of the file's own (a value), not only the queue's refusal
    of another project's sync (key NULL)."""
    return any(r["key"] is not None or r["kind"] is not None for r in rows)


def registry_problems(
    conn: psycopg.Connection, registry: Registry, exc: psycopg.Error | None = None,
    doc: dict[str, Any] | None = None,
) -> list[Problem]:
    """Every value of `registry` the database refuses (none when it takes them all), and, for a
    `doc` naming its file (sent_json), the queue's refusal of another project's sync. `exc`,
    the refusal that led here, stands in when the list comes back empty."""
    found = _problems(registry, _problem_rows(conn, sync_json(registry) if doc is None else doc))
    if not found and exc is not None:
        found = [Problem(str(registry.path), None, None,
                         exc.diag.message_primary or str(exc).strip())]
    return found


def problems_of(conn: psycopg.Connection, registry: Registry) -> list[Problem]:
    """registry_problems, with a refusal of the call itself (a NUL in a text, which no
    PostgreSQL text can hold) as one problem rather than an error."""
    try:
        with conn.transaction():
            return registry_problems(conn, registry)
    except psycopg.Error as exc:
        if not is_refusal(exc) or conn.broken:
            raise
        primary = (exc.diag.message_primary or str(exc)).strip().splitlines()
        return [Problem(str(registry.path), None, None, primary[0] if primary else "refused")]


def refuse_bad_values(conn: psycopg.Connection, registry: Registry, *, from_file: bool = False,
                      replace_queue: bool = False) -> None:
    """The database's verdict before anything uses a value of `registry`: RegistryRefused
    listing every problem, the queue's refusal of another project's sync among them
    (`from_file`), or nothing. The queue's refusal alone is left to the sync (one line)."""
    rows = _problem_rows(conn, sent_json(registry, from_file=from_file,
                                         replace_queue=replace_queue))
    if _own(rows):
        raise RegistryRefused(_problems(registry, rows))


def source(registry: Registry) -> dict[str, str]:
    """Which registry a sync comes from (its file as given, links not followed, and with links
    followed; this host): what the queue records as the registry of record
    (tickq.queue_registry); its settings.project travels in the registry itself."""
    return {"path": str(as_given(registry.path)), "resolved": str(resolved(registry.path)),
            "host": socket.gethostname()}


def sync_registry(
    conn: psycopg.Connection, registry: Registry, dispatcher: str | None = None, *,
    from_file: bool = False, replace_queue: bool = False, now: datetime | None = None,
) -> list[Drift]:
    """`tickq.sync_registry` (in a savepoint when a transaction is open); a refusal becomes
    RegistryRefused listing every problem. `dispatcher` names the sender (host:pid);
    `from_file` sends where the registry's file is, so a sync from another registry that
    would retire kinds of the queue is refused (TQ090) unless `replace_queue`. `now` is when
    the sync happens (default: the database's clock), for a simulation that deploys the registry
    at another time."""
    doc = sent_json(registry, from_file=from_file, replace_queue=replace_queue)
    if dispatcher is not None:
        doc["dispatcher"] = dispatcher
    # One statement: atomic on its own. Only inside a caller's transaction does it need a
    # savepoint (a refusal must not abort the caller's work); BEGIN and COMMIT around it would be
    # two more round trips on every tick.
    nested = conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE
    try:
        with (conn.transaction() if nested else contextlib.nullcontext()), \
                conn.cursor(row_factory=class_row(Drift)) as cur:
            return cur.execute(load_query("sync_registry"),
                               {"registry": Jsonb(doc), "now": now}).fetchall()
    except psycopg.Error as exc:
        if conn.broken:
            raise
        if exc.sqlstate == OTHER_PROJECT:  # the file's own problems too, all at once
            rows = _problem_rows(conn, doc)
            if _own(rows):
                raise RegistryRefused(_problems(registry, rows)) from exc
            raise
        if not is_refusal(exc):
            raise
        raise RegistryRefused(registry_problems(conn, registry, exc, doc)) from exc


def provisional_timeouts(settings: object) -> Timeouts:
    """The timeouts to reach the database with before it has judged the registry's own (its
    db_* settings): each of the registry's only where it shortens the default, so a value the
    database will refuse (0, which libpq takes as no timeout, or ten years) never holds."""
    wanted, default = tuple(timeouts_of(settings)), tuple(DEFAULT_TIMEOUTS)
    return Timeouts(*(min(w, d) if isinstance(w, int) and w > 0 else d
                      for w, d in zip(wanted, default, strict=True)))
