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


class NoAnswerInTime(DatabaseUnavailable):
    """The registry's db_statement_timeout or db_lock_timeout ended a call: the server is
    there but did not answer in time (SQLSTATE 57014 or 55P03)."""


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


class DatabaseRefused(Exception):
    """The database answered a call with an error: one of tickq's own refusals (``sqlstate``
        TQnnn) or any other server-side error. ``message`` is the server's primary message, the
    exception's text the whole of what the server said."""

    def __init__(self, sqlstate: str | None, message: str, text: str | None = None) -> None:
        super().__init__(text or message)
        self.sqlstate = sqlstate
        self.message = message
