"""What can end a command badly, and the one map from each to an exit status and its lines.

Callers branch on these classes (and on ``sqlstate``), never on a message's text. The exit
statuses (docs/reference/exit-statuses.md is generated from this map): 0 the command did its
work, 1 the answer is "no" (no free slot, no such kind or agent, a name taken), 2 invalid
registry, input or configuration, 3 the database cannot be reached or refused for a reason of
its own, 4 no scratch database for a simulation could be made (the queue itself was fine),
128+N stopped by signal N (the command line handles signals itself).

The map lives here, in the database door, because the door is the only code that may name
psycopg's exceptions; every other room's failure is one of the classes below (or a subclass
of one), so `exit_of` can name them all without importing a room above the door.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import psycopg

    from tickq.registry.model import Problem

EXIT_OK, EXIT_NO, EXIT_CONFIG, EXIT_DATABASE, EXIT_SCRATCH = 0, 1, 2, 3, 4


class Failure(Exception):
    """A command's end in one line (``str``) whose exit status `exit_of` gives by its class."""


class NoAnswer(Failure):
    """The command ran and the answer is "no": no such kind or agent, a name taken, no slot."""

    def __init__(self, message: str, sqlstate: str | None = None) -> None:
        super().__init__(message)
        self.sqlstate = sqlstate


class InvalidInput(Failure):
    """A value given on the command line, in a file or by the environment cannot be used."""


class DatabaseUnreachable(Failure):
    """No conversation with the database could start: not reachable, or the embedded server
    failed to start. The message says which, in one line."""


class ScratchUnavailable(Failure):
    """No scratch database for the simulation of `check` or `simulate` could be made: on the
    server TICKQ_SCRATCH_URL names, or on the embedded PostgreSQL (tickq.db.scratch). Never the
    queue's fault: the queue is only read."""

    def __str__(self) -> str:
        return f"cannot create a scratch database for the simulation: {self.args[0]}"


class MigrationError(Failure):
    """A migration or API file failed or the migration files are inconsistent."""


class DatabaseUnavailable(Failure):
    """The database could not be reached (after the bounded retries where they apply)."""


class CannotConnect(DatabaseUnavailable, DatabaseUnreachable):
    """No connection could be opened: the server is not reached (or refused the login). A
    reconnect loop tries again; a command ends with the cause in one line."""


class NoAnswerInTime(DatabaseUnavailable):
    """The registry's db_statement_timeout or db_lock_timeout ended a call: the server is
    there but did not answer in time (SQLSTATE 57014 or 55P03)."""


class ClaimRefused(NoAnswer):
    """A manual run could not be claimed; ``sqlstate`` says why."""

    def __init__(self, sqlstate: str, message: str) -> None:
        super().__init__(message, sqlstate)


class RegistryRefused(Failure):
    """The database refused values of a registry; `problems` holds each, as the file's own
    validation reports them (file, kind, key)."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = list(problems)
        super().__init__("; ".join(str(p) for p in self.problems))


class QueueReadOnly(Failure):
    """The database takes no writes (a standby, `default_transaction_read_only`): a dispatcher
    can claim, report and record nothing there. The message names the cause."""


READ_ONLY = "25006"  # read_only_sql_transaction


def read_only(cause: str) -> str:
    """The one line of a command that met a read-only database (`cause` says how)."""
    return (f"the database is read-only ({cause}): nothing can be claimed, reported or "
            "recorded there; point the URL at the primary (a multi-host URL with "
            "target_session_attrs=read-write finds it)")


class DatabaseRefused(Failure):
    """The database answered a call with an error: one of tickq's own refusals (``sqlstate``
    TQnnn) or any other server-side error. ``message`` is the server's primary message, the
    exception's text the whole of what the server said."""

    def __init__(self, sqlstate: str | None, message: str, text: str | None = None) -> None:
        super().__init__(text or message)
        self.sqlstate = sqlstate
        self.message = message


# SQLSTATEs of sql/api that answer "no" (unknown kind, no free slot, already running, unknown
# agent, agent name taken); every other TQ state, and class 22 (a value out of a type's range),
# refuses a value, the caller's input.
NO_STATES = frozenset({"TQ003", "TQ005", "TQ006", "TQ041", "TQ042"})
UNKNOWN_KIND = "TQ003"

# SQLSTATEs of a call that may well succeed if made again later: the transaction was rolled
# back for another's sake (class 40: serialization failure, deadlock), the server is short of
# resources (53) or shutting down (57P01..57P03), a db_* timeout (57014, 55P03).
TRANSIENT_CLASSES = ("40", "53", "08")
TRANSIENT_STATES = frozenset({"57014", "55P03", "57P01", "57P02", "57P03"})


def transient(exc: BaseException) -> bool:
    """Whether `exc`, from a call through tickq.db.connect.Link, says "not now" rather than
    "never": the connection was lost, a timeout fired, or a state above."""
    if isinstance(exc, DatabaseUnavailable):
        return True
    state = getattr(exc, "sqlstate", None) or ""
    return state in TRANSIENT_STATES or state.startswith(TRANSIENT_CLASSES)

# The map: the first class `exc` is an instance of gives its exit status and its line ("{}" is
# the exception's text). Classes with `problems` print one line per problem before the count.
EXITS: tuple[tuple[type[BaseException], int, str], ...] = (
    (RegistryRefused, EXIT_CONFIG, "invalid registry: {count} problem(s)"),
    (ScratchUnavailable, EXIT_SCRATCH, "{}"),
    (MigrationError, EXIT_DATABASE, "migration failed: {}"),
    (CannotConnect, EXIT_DATABASE, "{}"),
    (DatabaseUnavailable, EXIT_DATABASE, "lost the database: {}"),
    (NoAnswer, EXIT_NO, "{}"),
    (InvalidInput, EXIT_CONFIG, "{}"),
    (DatabaseUnreachable, EXIT_DATABASE, "{}"),
    (Failure, EXIT_DATABASE, "{}"),
)


def exit_of(exc: BaseException) -> tuple[int, list[str]] | None:
    """The exit status and the lines (without "tickq: ") that end a command failing with
    `exc`, or None for an exception no map entry knows (a bug: its traceback is wanted)."""
    import psycopg

    from tickq.registry import RegistryError

    if isinstance(exc, psycopg.Error):
        primary = exc.diag.message_primary or str(exc)
        return _database_exit(exc.sqlstate or "", primary, type(exc).__name__)
    if isinstance(exc, DatabaseRefused):
        return _database_exit(exc.sqlstate or "", exc.message, type(exc).__name__)
    if isinstance(exc, RegistryError):
        exc = RegistryRefused(exc.problems)
    if isinstance(exc, OSError):  # a file or folder tickq needs and cannot use
        cause = exc.strerror or str(exc) or type(exc).__name__
        return EXIT_CONFIG, [f"{exc.filename}: {cause}" if exc.filename else cause]
    for cls, status, line in EXITS:
        if isinstance(exc, cls):
            problems = [str(p) for p in getattr(exc, "problems", [])]
            # A message of several lines (every problem of a file) gives a line each.
            lines = line.format(str(exc).strip(), count=len(problems)).splitlines()
            return status, [*problems, *lines]
    return None


def _database_exit(state: str, primary: str, name: str) -> tuple[int, list[str]]:
    cause = _first_line(primary) or name
    if state in NO_STATES:
        return EXIT_NO, [cause]
    if state.startswith(("TQ", "22")):
        return EXIT_CONFIG, [cause]
    if state == READ_ONLY:
        return EXIT_DATABASE, [read_only(cause)]
    if not state or state.startswith("08"):  # the connection broke
        return EXIT_DATABASE, [f"lost the database: {cause}"]
    return EXIT_DATABASE, [f"the database refused: {cause} (SQLSTATE {state})"]


def translated(exc: psycopg.Error) -> Exception:
    """A refusal of sql/api as the class callers branch on (NoAnswer, InvalidInput), keeping
    its SQLSTATE; any other database error as it is."""
    state = exc.sqlstate or ""
    message = _first_line(exc.diag.message_primary or str(exc))
    if state in NO_STATES:
        return NoAnswer(message, state)
    if state.startswith(("TQ", "22")):
        return InvalidInput(message)
    return exc


def _first_line(text: str) -> str:
    lines = text.strip().splitlines()
    return lines[0] if lines else ""

