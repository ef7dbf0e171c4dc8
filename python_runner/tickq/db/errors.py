"""What the database door raises: one exception per way a database conversation can end badly.

Callers branch on these classes (and on ``sqlstate``), never on a message's text.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tickq.registry.model import Problem


class MigrationError(Exception):
    """A migration or API file failed or the migration files are inconsistent."""


class DatabaseUnavailable(Exception):
    """The database could not be reached (after the bounded retries where they apply)."""


class ClaimRefused(Exception):
    """A manual run could not be claimed; ``sqlstate`` says why."""

    def __init__(self, sqlstate: str, message: str) -> None:
        super().__init__(message)
        self.sqlstate = sqlstate


class RegistryRefused(Exception):
    """The database refused values of a registry; `problems` holds each, as the file's own
    validation reports them (file, kind, key)."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = list(problems)
        super().__init__("; ".join(str(p) for p in self.problems))


class ScratchUnavailable(Exception):
    """The server would not give a simulation a scratch database (e.g. no CREATEDB)."""
