"""The three roles of sql/roles.sql (`tickq roles print`) in a fresh database of the test server,
with names unique to the test (the reader's with a quote and a space, to prove the names reach
SQL only quoted) and a password each; dropped afterwards. tests_py/conftest.py's `roles`
fixture."""

from __future__ import annotations

import contextlib
import secrets
import uuid
from collections.abc import Iterator
from dataclasses import dataclass

from psycopg import conninfo, sql

from tickq import db
from tickq.db.api.roles import roles_script


@dataclass
class Roles:
    admin_url: str
    owner: str
    dispatcher: str
    reader: str

    def url(self, role: str) -> str:
        return conninfo.make_conninfo(self.admin_url, user=role, password=self.passwords[role])

    passwords: dict[str, str]


@contextlib.contextmanager
def made_roles(pg_server_url: str) -> Iterator[Roles]:
    tag = uuid.uuid4().hex[:8]
    name = f"t_roles_{tag}"
    owner, dispatcher, reader = f"tq_{tag}_owner", f"tq_{tag}_dispatcher", f"tq {tag} \"reader's\""
    admin_url = db.create_database(pg_server_url, name)
    passwords = {role: secrets.token_hex(12) for role in (owner, dispatcher, reader)}
    try:
        with db.connect(admin_url) as admin:
            admin.execute(roles_script(owner, dispatcher, reader))  # type: ignore[arg-type]
            for role, password in passwords.items():
                admin.execute(sql.SQL("ALTER ROLE {} PASSWORD {}").format(
                    sql.Identifier(role), sql.Literal(password)))
        yield Roles(admin_url, owner, dispatcher, reader, passwords)
    finally:
        db.drop_database(pg_server_url, name)
        with db.connect(pg_server_url) as admin:
            for role in (owner, dispatcher, reader):
                admin.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(sql.Identifier(role)))
