"""What a sync found, logged as the registry file writes it: an edit of the file is news, a row
changed behind its back a warning, a kind retired (gone from the file) a warning of its own, two
hosts syncing different files a conflict, a kind whose row another session holds a warning that
it waits for the next tick."""

from __future__ import annotations

from typing import Any

from tickq.db.api.registry import Drift
from tickq.log import EventLog
from tickq.registry.durations import format_duration

LOCKED = "locked"  # not a difference: a kind whose row another session held, left for next time


def _registry_units(unit: str | None, value: Any) -> Any:
    """A drift value as the registry writes it: 300 seconds of `every` is "5m"."""
    if unit == "s" and isinstance(value, int | float) and value >= 1:
        return format_duration(int(value))
    return value


def log_drift(log: EventLog, name: str, d: Drift) -> None:
    """An edit of the registry file is news; a row changed behind its back is a warning."""
    # A disarmed irreversible kind waits for a person, even when an edit of the file did it.
    level = "info" if d.registry_edit and d.field != "armed" else "warning"
    if d.field == LOCKED:
        log.warning("kind.locked", kind=d.kind,
                    hint="another session holds its job_kind row (a transaction left open in "
                         "psql?): not synced or claimed this tick; the next tick tries again")
    elif d.kind is not None and d.field == "kind" and d.registry_value is None:
        # A kind gone from the registry: news of its own, never only a line of drift.
        log.warning("kind.retired", kind=d.kind,
                    hint="gone from the registry: no longer claimed, its runs kept; `tickq "
                         "status --retired` lists it, `tickq forget KIND` deletes it")
    elif d.kind is None and d.field == "registry":
        stored, wanted = d.stored_value, d.registry_value
        log.warning(
            "registry.conflict", dispatcher=name, other=stored["dispatcher"],
            other_synced_at=stored["synced_at"], fingerprint=wanted["fingerprint"],
            other_fingerprint=stored["fingerprint"],
            hint="dispatchers on two hosts sync different registry files; each sync undoes the "
                 "other's: give them the same file",
        )
    elif d.changed is not None:
        # Digests only, and even those say nothing to a reader: name what changed.
        log.event("registry.drift", level=level, kind=d.kind, field=d.field,
                  changed=",".join(d.changed or []),
                  registry_edit=d.registry_edit)
    else:
        log.event("registry.drift", level=level, kind=d.kind, field=d.field,
                  stored=_registry_units(d.unit, d.stored_value),
                  registry=_registry_units(d.unit, d.registry_value),
                  registry_edit=d.registry_edit)
