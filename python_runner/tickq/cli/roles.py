"""`tickq roles print`: sql/roles.sql with the names of the owner, dispatcher and reader roles."""

from __future__ import annotations

import argparse
import sys

from tickq.db.api.roles import ROLES, roles_script
from tickq.db.errors import EXIT_OK, InvalidInput

__all__ = ["add_commands", "cmd_roles", "roles_script"]


def cmd_roles(args: argparse.Namespace) -> int:
    try:
        sys.stdout.write(roles_script(args.owner, args.dispatcher, args.reader))
    except ValueError as exc:
        raise InvalidInput(str(exc)) from None
    return EXIT_OK


def add_commands(sub: argparse._SubParsersAction) -> None:
    text = "print sql/roles.sql: the owner, dispatcher and reader roles of a tickq database"
    p = sub.add_parser("roles", help=text, description=text)
    p.add_argument("action", choices=("print",))
    for role in ROLES:
        p.add_argument(f"--{role}", default=f"tickq_{role}", help=f"the {role} role's name")
    p.set_defaults(func=cmd_roles)
