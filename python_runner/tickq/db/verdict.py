"""The database's verdict on a registry's values: the names the engine's callers use, kept for
them; the door itself is tickq.db.api.registry."""

from __future__ import annotations

from typing import Any

import psycopg

from tickq.db.api.registry import INVALID_REGISTRY, is_refusal, registry_problems, sync_registry
from tickq.db.errors import RegistryRefused
from tickq.registry import Problem, Registry

__all__ = ["INVALID_REGISTRY", "RegistryRefused", "is_refusal", "problems", "sync"]


def problems(
    conn: psycopg.Connection, registry: Registry, exc: psycopg.Error | None = None
) -> list[Problem]:
    """Every value of `registry` the database refuses (tickq.db.api.registry.registry_problems)."""
    return registry_problems(conn, registry, exc)


def sync(conn: psycopg.Connection, registry: Registry) -> list[Any]:
    """`tickq.sync_registry` on `conn` (tickq.db.api.registry.sync_registry)."""
    return sync_registry(conn, registry)
