"""reference/exit-statuses.md: how a command ends, from the one exit map
(tickq.db.errors.EXITS and exit_of) and the SQLSTATEs the SQL raises.

The SQLSTATEs are those sql/ raises (`ERRCODE = 'TQnnn'`), each described by the line that
lists it in the comment at the top of its API file (`--   TQnnn name  meaning`); the generator
fails while one is raised and not listed, or listed and never raised.
"""

from __future__ import annotations

import re

from common import REPO, code, header, table

SQL = REPO / "sql"
LISTED = re.compile(r"^--\s+(TQ\d{3})\s+(\w+)\s+(.+)$", re.MULTILINE)
RAISED = re.compile(r"(?:ERRCODE\s*=\s*|THEN\s+|ELSE\s+)'(TQ\d{3})'")


def listed() -> dict[str, tuple[str, str]]:
    """{code: (name, meaning)} from the comments of sql/api/*.sql."""
    found: dict[str, tuple[str, str]] = {}
    for path in sorted((SQL / "api").glob("*.sql")):
        for state, name, meaning in LISTED.findall(path.read_text()):
            found[state] = (name, meaning.strip())
    return found


def raised() -> set[str]:
    return {state for path in SQL.rglob("*.sql") for state in RAISED.findall(path.read_text())}


def sqlstates() -> list[tuple[str, str, str, int]]:
    """(code, name, meaning, exit status) of every SQLSTATE of class TQ, in code order."""
    from tickq.db.errors import DatabaseRefused, exit_of

    described, used = listed(), raised()
    if set(described) != used:
        raise SystemExit(f"SQLSTATEs raised but not listed: {sorted(used - set(described))}; "
                         f"listed but never raised: {sorted(set(described) - used)}")
    rows = []
    for state in sorted(used):
        status, _ = exit_of(DatabaseRefused(state, "x"))
        rows.append((state, *described[state], status))
    return rows


# What each exit status of tickq.db.errors means (EXIT_*): the generator fails for one without.
MEANINGS = {
    "EXIT_OK": "done: the command did its work (failing jobs do not change it for `tick`)",
    "EXIT_NO": "a \"no\" answer: a `run` that did not end ok or found no free slot, capacity "
               "exceeded or a command that cannot start (`check`), starvation simulated, a "
               "problem for `status --check`, an unknown kind",
    "EXIT_CONFIG": "invalid registry or configuration (also a `--database-url` that is not a "
                   "URL, a file tickq needs and cannot use)",
    "EXIT_DATABASE": "the database cannot be reached, cannot be written (`tick`, `run` and "
                     "`sync` against a read-only database, a standby or "
                     "`default_transaction_read_only = on`, claim nothing, due or not, and name "
                     "the cause), or refused for a reason of its own",
    "EXIT_SCRATCH": "`check` or `simulate` could make no scratch database to simulate in (on "
                    "`TICKQ_SCRATCH_URL`'s server or the embedded one): the queue itself was "
                    "fine",
}


def _first_sentence(cls: type) -> str:
    text = " ".join((cls.__doc__ or "").split())
    return text.split(". ")[0].rstrip(".") + "."


def page() -> str:
    from tickq.db import errors

    names = {n for n in dir(errors) if n.startswith("EXIT_")}
    if names != set(MEANINGS):
        raise SystemExit(f"exit statuses without a meaning here, or meanings of no status: "
                         f"{sorted(names ^ set(MEANINGS))}")
    statuses: list[tuple[object, str]] = sorted(
        ((getattr(errors, n), MEANINGS[n]) for n in names), key=lambda row: row[0])
    statuses.append(("128+N", "stopped by signal N; 141 when the reader of the output went away "
                     "(`tickq status | head`), 130 at Ctrl-C"))
    mapped = [(f"`{cls.__name__}`", status, code("tickq: " + line), _first_sentence(cls))
              for cls, status, line in errors.EXITS]
    parts = [header("Exit statuses and errors", "tickq.db.errors (the exit map) and the "
                    "SQLSTATEs of sql/"), INTRO,
             table(("status", "meaning"), statuses), MAP_TEXT,
             table(("failure", "status", "line", "what"), mapped), DATABASE_TEXT,
             table(("SQLSTATE", "name", "meaning", "exit status"),
                   [(code(s), code(n), m, st) for s, n, m, st in sqlstates()]),
             AFTER]
    return "\n".join(parts)


INTRO = """
Every command ends with one of these statuses. A failure prints one line (one per problem for
an invalid registry), starting `tickq: `, on stderr: never a traceback.
"""

MAP_TEXT = """
## Which failure gives which status

One map, `tickq.db.errors.EXITS`, turns each way a command can fail into its status and line
(`{}` is the failure's own text); the first class that matches wins. A file or folder tickq
needs and cannot use (an `OSError`) exits 2 naming it.
"""

DATABASE_TEXT = """
## Errors the database raises

A database error ends a command by its SQLSTATE: a lost connection (class `08`) exits 3 with
`lost the database: ...`; a value out of a type's range (class `22`) exits 2; any other state
outside class `TQ` exits 3 with `the database refused: ... (SQLSTATE ...)`.

tickq's own refusals carry SQLSTATEs of class `TQ`, with DETAIL and HINT; callers branch on the
state, never on the message:
"""

AFTER = """
A mistyped kind name (`run`, `pause`, `resume`) gets the closest names, or the list of kinds.
"""
