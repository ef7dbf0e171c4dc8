"""The environment a timer passes to `tickq tick`, and the password it never holds.

The timer files contain `environment`, but never a password: timer_environment refuses a
DATABASE_URL that holds one, and keep_password_out moves it to a libpq passfile (mode 0600)
first. The files are still written with mode 0600.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from tickq.db.connect import split_password, url_params
from tickq.host.ledger import default_folder
from tickq.timers.common import TimerError, write_private

# Variables copied from the installing shell into the timer's environment, when set. None of
# them may hold a password: libpq reads it from PGPASSFILE (see keep_password_out).
PASSED_THROUGH = (
    "DATABASE_URL", "TICKQ_DATA_DIR", "PGPASSFILE", "PGSERVICE", "PGSERVICEFILE",
)
# The standard folders of programs (systemd's default PATH for services), after the folder of
# the tickq the timer runs.
SYSTEM_FOLDERS = ("/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin")


def timer_path(program_dir: Path) -> str:
    """The PATH of every timer: the folder of the tickq it runs (a venv's bin: `tickq` and that
    venv's programs by their bare names), then SYSTEM_FOLDERS. Never the installing shell's
    PATH, whose folders (a 0700 home's, say) the timer's user may not be able to search."""
    first = str(Path(program_dir).absolute())
    return ":".join([*([] if first in SYSTEM_FOLDERS else [first]), *SYSTEM_FOLDERS])


def timer_environment(*, registry_path: Path, environ: Mapping[str, str], program_dir: Path,
                      uid: int | None = None) -> dict[str, str]:
    """The variables a timer should pass to `tickq tick`: PATH (timer_path), TICKQ_REGISTRY
    (absolute) and those of PASSED_THROUGH that are set in `environ` (normally os.environ).
    TICKQ_RUN_DIR is always set, to the ledger folder the timer's user's `tickq run` uses
    (`uid`, default this process's user): launchd does not give a job the terminal's TMPDIR,
    and a timer's tick must find the commands a manual run left behind."""
    env = {"PATH": timer_path(program_dir)}
    env |= {key: environ[key] for key in PASSED_THROUGH if environ.get(key)}
    if env.get("DATABASE_URL") and _split_password(env["DATABASE_URL"])[1] is not None:
        raise TimerError(
            "DATABASE_URL holds a password, which a timer file would keep in clear: "
            "move it to a passfile first (keep_password_out)"
        )
    env["TICKQ_REGISTRY"] = str(Path(registry_path).absolute())
    env["TICKQ_RUN_DIR"] = str(default_folder(environ, uid))
    return env


def holds_password(environ: Mapping[str, str]) -> bool:
    """Whether `environ`'s DATABASE_URL carries a password."""
    url = environ.get("DATABASE_URL")
    return bool(url) and _split_password(url)[1] is not None


def _split_password(url: str) -> tuple[str, str | None]:
    """split_password, with a TimerError that says which variable libpq could not read."""
    try:
        return split_password(url)
    except ValueError as exc:
        raise TimerError(f"DATABASE_URL is not a connection string libpq reads: {exc}") from None


def _pgpass_escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace(":", "\\:")


def _pgpass_fields(url: str) -> list[str]:
    """host, port, database and user of a pgpass line for connections like `url` (`*` where
    `url` leaves one open; `localhost` is libpq's name for no host). libpq matches a line
    against the one host and port it is trying, so a list of hosts or ports (a multi-host URL)
    becomes `*`: one line for all of them."""
    params = url_params(url)
    fields = [params.get("host") or "localhost"]
    fields += [params.get(key) or "*" for key in ("port", "dbname", "user")]
    fields[:2] = ["*" if "," in f else f for f in fields[:2]]
    return [f if f == "*" else _pgpass_escape(f) for f in fields]


def pgpass_line(url: str, password: str) -> str:
    """The line of a libpq password file (pgpass) that gives `password` to connections like
    `url`."""
    return ":".join([*_pgpass_fields(url), _pgpass_escape(password)])


def default_passfile(environ: Mapping[str, str] | None = None) -> Path:
    """$PGPASSFILE, else tickq's own passfile in the user's config folder (a file of the user's
    ~/.pgpass is never rewritten by tickq)."""
    environ = os.environ if environ is None else environ
    if environ.get("PGPASSFILE"):
        return Path(environ["PGPASSFILE"]).expanduser().absolute()
    import platformdirs

    return Path(platformdirs.user_config_dir("tickq", appauthor=False)) / "pgpass"


def keep_password_out(environ: dict[str, str]) -> Path | None:
    """When `environ`'s DATABASE_URL holds a password: write it to the passfile (mode 0600, in a
    folder of mode 0700; a line for the same host, port, database and user is replaced), and
    change `environ` to the URL without it plus PGPASSFILE. Returns the passfile written."""
    url = environ.get("DATABASE_URL")
    if not url:
        return None
    stripped, password = _split_password(url)
    if password is None:
        return None
    path = default_passfile(environ)
    key = ":".join(_pgpass_fields(stripped)) + ":"
    kept = path.read_text().splitlines() if path.exists() else []
    kept = [old for old in kept if not old.startswith(key)]
    line = pgpass_line(stripped, password)
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    write_private(path, ("\n".join([*kept, line]) + "\n").encode())
    environ["DATABASE_URL"] = stripped
    environ["PGPASSFILE"] = str(path)
    return path
