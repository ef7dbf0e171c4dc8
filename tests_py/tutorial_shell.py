"""The reader a tutorial is written for, made of real parts: a home folder of their own with the
checkout of tickq at `~/tickq` (a link to this repository), a minimal environment, and the
embedded PostgreSQL that tickq starts on its own, in a data folder of the test's (never the
user's or root's default).

Used by tests_py/test_docs_tutorials.py and by docs/gen/tutorials.py --update.
"""

from __future__ import annotations

import os
import pwd
import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"
_PASSWD = pwd.getpwuid(os.getuid())
PASSWD_HOME, PASSWD_NAME = _PASSWD.pw_dir, _PASSWD.pw_name
# (home, the environment its shell starts with, {real folder: how the page names it})
Home = tuple[Path, dict[str, str], dict[str, str]]


@contextmanager
def reader() -> Iterator[Callable[[str, bool], Home]]:
    """A factory of fresh homes that share one embedded server, stopped and removed after."""

    root = Path(tempfile.mkdtemp(prefix="tickq-tutorial-"))
    root.chmod(0o711)  # as root, the server's own user must pass it
    data = root / "data"

    def new_home(name: str, tickq_on_path: bool) -> Home:
        home = root / name
        home.mkdir(mode=0o711)
        (home / "tickq").symlink_to(REPO)
        env = {
            "HOME": str(home), "LANG": "C.UTF-8",
            "PATH": (f"{home}/tickq/.venv/bin:" if tickq_on_path else "") + SYSTEM_PATH,
            "TZ": "UTC", "USER": os.environ.get("USER", "root"), "TERM": "dumb",
            "PYTHONUNBUFFERED": "1", "TICKQ_DATA_DIR": str(data),
            "TICKQ_RUN_DIR": str(home / ".ledger"), "TICKQ_CACHE_DIR": str(home / ".cache"),
            "COLUMNS": "250",  # wide enough that no line is cut inside a folder the test masks
        }
        # Longest first: the checkout and the data folder live under the home. The variables a
        # reader would not have set (the test's own folders) are shown as a reader sees them;
        # the home as /home/me, the user's home in the password database too (which
        # `tickq legacy import` gives a crontab's jobs, as cron does), since a reader's is one,
        # and the user cron would log in as (LOGNAME) as me.
        folders = {f"TICKQ_DATA_DIR={data} ": "", str(home / ".ledger"): "/tmp/tickq-1000",
                   str(REPO): "/home/me/tickq", str(home / "tickq"): "/home/me/tickq",
                   str(data): "/home/me/.local/share/tickq", str(home): "/home/me",
                   f'"{PASSWD_HOME}"': '"/home/me"',
                   f'LOGNAME = "{PASSWD_NAME}"': 'LOGNAME = "me"'}
        return home, env, dict(sorted(folders.items(), key=lambda kv: -len(kv[0])))

    try:
        yield new_home
    finally:
        _stop_now(data / "pg")
        shutil.rmtree(root, ignore_errors=True)


def _stop_now(pgdata: Path) -> None:
    """Stop the tutorials' server without its shutdown checkpoint (`-m immediate`): its data
    is deleted next, and the checkpoint of the scratch databases `check` made took seconds."""
    from tickq.db import embedded

    if not (pgdata / "postmaster.pid").exists():
        return
    embedded.run_as(embedded.server_user(), [str(embedded.bin_dir() / "pg_ctl"), "-D",
                    str(pgdata), "-w", "-m", "immediate", "stop"], cwd=pgdata, timeout=60)
