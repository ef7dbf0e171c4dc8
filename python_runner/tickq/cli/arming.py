"""The first run of an irreversible kind by hand: who is running it, and their confirmation.

The database refuses to claim an unarmed irreversible kind unless a person is named
(`tickq.claim_manual`), and only that person's successful run arms it. This module is where the
person comes from: the OS user at a terminal who typed the kind's name back, or who passed
`--yes-i-ran-this-by-hand` in a runbook.
"""

from __future__ import annotations

import os
import pwd
import sys
from typing import TextIO

from tickq.db.errors import NoAnswer


class NotConfirmed(NoAnswer):
    """The first run was not confirmed; the message says why, in one line (exit 1)."""


def person() -> str:
    """The OS user running tickq (from the uid, not $USER), and who used sudo to become it."""
    try:
        name = pwd.getpwuid(os.getuid()).pw_name
    except KeyError:
        name = f"uid {os.getuid()}"
    sudo_user = os.environ.get("SUDO_USER")
    return f"{name} (sudo from {sudo_user})" if sudo_user and sudo_user != name else name


def confirm_first_run(
    kind: str, refusal: str, assume_yes: bool,
    stdin: TextIO | None = None, stdout: TextIO | None = None,
) -> str:
    """The person confirming the first run of the irreversible `kind`, or NotConfirmed."""
    stdin = stdin or sys.stdin
    stdout = stdout or sys.stderr
    if assume_yes:
        return person()
    if not stdin.isatty():
        raise NotConfirmed(
            f"{refusal}; stdin is not a terminal: run it from one and type the kind's name "
            "back, or pass --yes-i-ran-this-by-hand"
        )
    stdout.write(f'"{kind}" is irreversible and has not run yet: this first run by hand arms it '
                 f"for its schedule.\nType the kind's name to run it now: ")
    stdout.flush()
    answer = stdin.readline().strip()
    if answer != kind:
        raise NotConfirmed(f'not confirmed (typed {answer!r}, not "{kind}"); nothing was run')
    return person()
