"""What the three timers share: names, the checks every input passes before a file is built,
and the thin side-effecting helpers (a private file written atomically, a tool run)."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

DEFAULT_NAME = "tick"
DEFAULT_STOP_TIMEOUT = 30  # seconds between SIGTERM and SIGKILL when the timer stops a tick

_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}\Z")


class TimerError(Exception):
    """The timer cannot be built or installed; the message says why and what to do instead."""


def timer_name(text: str | None = None) -> str:
    """A name usable in a launchd label, a systemd unit name and a file name, from free text
    such as the registry's folder name: lower case, runs of other characters become "-",
    at most 64 characters; "tick" when nothing is left."""
    if not text:
        return DEFAULT_NAME
    name = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:64].strip("-")
    return name or DEFAULT_NAME


def aligned_minutes(interval_seconds: int) -> list[int] | None:
    """The minutes of each hour a clock-aligned timer fires at (`every` cadences land on
    :00, :05, :10... the same way), when the interval is whole minutes that divide an hour;
    None for any other interval, which then counts from the timer's start."""
    minutes, rest = divmod(interval_seconds, 60)
    if rest or minutes < 1 or 60 % minutes:
        return None
    return list(range(0, 60, minutes))


# ---------------------------------------------------------------- checks


def check_name(name: str) -> str:
    if not isinstance(name, str) or not NAME.match(name):
        raise TimerError(
            f"timer name {name!r} must be 1-64 letters, digits, '-' or '_', starting with a "
            "letter or digit; timer_name() makes one from any text"
        )
    return name


def check_argv(argv: Sequence[str]) -> list[str]:
    if isinstance(argv, str) or not argv or not all(isinstance(a, str) for a in argv):
        raise TimerError("program_arguments must be a non-empty list of strings")
    if not Path(argv[0]).is_absolute():
        raise TimerError(
            f"the program {argv[0]!r} must be an absolute path: timers start it with a minimal "
            "PATH (use shutil.which() or sys.executable)"
        )
    if any("\0" in a for a in argv):
        raise TimerError("program_arguments cannot contain a NUL character")
    return list(argv)


def check_interval(seconds: int) -> None:
    check_positive("interval_seconds", seconds)


def check_positive(what: str, value: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise TimerError(f"{what} must be a whole number of seconds >= 1, not {value!r}")


def check_absolute(what: str, path: Path) -> Path:
    path = Path(path)
    if not path.is_absolute():
        raise TimerError(f"{what} must be an absolute path, not {str(path)!r}")
    return path


def check_environment(environment: Mapping[str, str]) -> dict[str, str]:
    env = dict(environment)
    for key, value in env.items():
        if not isinstance(key, str) or not _ENV_NAME.match(key):
            raise TimerError(f"environment variable name {key!r} is not a valid name")
        if not isinstance(value, str) or "\0" in value:
            raise TimerError(f"environment variable {key} must be a string without NUL")
    return env


def require_platform(platform: str, tool: str) -> None:
    if not sys.platform.startswith(platform):
        other = {"darwin": "`tickq systemd install` (Linux) or `tickq cron print`",
                 "linux": "`tickq launchd install` (macOS) or `tickq cron print`"}
        raise TimerError(
            f"{tool} timers only exist on {platform}; this is {sys.platform}. "
            f"Use {other.get(platform, '`tickq cron print`')} instead."
        )


# ---------------------------------------------------------------- side effects


def write_private(path: Path, data: bytes) -> None:
    """Write atomically, readable by the owner only (the environment may hold a password)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def run(argv: list[str]) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(
            argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, check=False
        )
    except OSError as e:
        raise TimerError(f"cannot run {argv[0]}: {e}") from e


def run_checked(argv: list[str], what: str) -> None:
    result = run(argv)
    if result.returncode != 0:
        raise failed(result, what)


def failed(result: subprocess.CompletedProcess[str], what: str) -> TimerError:
    detail = (result.stderr or result.stdout or "").strip() or "(no output)"
    return TimerError(
        f"{what}: `{shlex.join(result.args)}` exited with {result.returncode}:\n  {detail}"
    )
