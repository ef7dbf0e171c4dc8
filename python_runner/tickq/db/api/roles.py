"""sql/roles.sql with the names of the owner, dispatcher and reader roles (`tickq roles print`).

The names reach the script as quoted literals in its three `set_config` lines and are used
inside it only through format('%I'), so any name PostgreSQL accepts is safe to give.
"""

from __future__ import annotations

import re

from psycopg import sql

from tickq import db

ROLES = ("owner", "dispatcher", "reader")
_NAME_LINE = re.compile(
    r"^SELECT set_config\('tickq\.roles_(owner|dispatcher|reader)', '[^']*', false\);$",
    re.MULTILINE,
)
_MAX_NAME_BYTES = 63  # NAMEDATALEN - 1: a longer name would be truncated by PostgreSQL


def roles_script(owner: str, dispatcher: str, reader: str) -> str:
    """sql/roles.sql with these role names; ValueError when a name cannot be a role's."""
    names = {"owner": owner, "dispatcher": dispatcher, "reader": reader}
    for role, name in names.items():
        if not name or "\0" in name or len(name.encode()) > _MAX_NAME_BYTES:
            raise ValueError(f"--{role}: a role name is 1 to {_MAX_NAME_BYTES} bytes, got {name!r}")
    if len(set(names.values())) != len(names):
        raise ValueError("owner, dispatcher and reader must be three different roles")
    text = (db.sql_root() / "roles.sql").read_text(encoding="utf-8")

    def line(match: re.Match[str]) -> str:
        literal = sql.Literal(names[match.group(1)]).as_string(None).strip()
        return f"SELECT set_config('tickq.roles_{match.group(1)}', {literal}, false);"

    text, count = _NAME_LINE.subn(line, text)
    if count != len(ROLES):
        raise RuntimeError(f"sql/roles.sql: expected {len(ROLES)} name lines, found {count}")
    return text
