"""A launchd agent (macOS) that runs `tickq tick`: the plist bytes, the launchctl argv lists,
and the install and uninstall that write the one and run the others."""

from __future__ import annotations

import os
import plistlib
import re
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from tickq.timers.common import (
    DEFAULT_NAME,
    DEFAULT_STOP_TIMEOUT,
    TimerError,
    aligned_minutes,
    check_absolute,
    check_argv,
    check_environment,
    check_interval,
    check_name,
    check_positive,
    failed,
    require_platform,
    run,
    write_private,
)

LABEL_PREFIX = "dev.tickq."
_LABEL = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}\Z")

# launchctl may report a failure for a bootstrap that follows a bootout too closely (the old
# instance is still being torn down); retry a few times before giving up.
_BOOTSTRAP_TRIES = 4
_BOOTSTRAP_PAUSE = 0.5


class LaunchdPaths(NamedTuple):
    plist: Path  # ~/Library/LaunchAgents/<label>.plist
    log: Path  # ~/Library/Logs/tickq/<label>.log


def launchd_label(name: str = DEFAULT_NAME) -> str:
    """`dev.tickq.<name>`."""
    return LABEL_PREFIX + check_name(name)


def _check_label(label: str) -> str:
    if not isinstance(label, str) or not _LABEL.match(label):
        raise TimerError(
            f"launchd label {label!r} must be letters, digits, '.', '-' or '_' "
            f"(like {LABEL_PREFIX}{DEFAULT_NAME})"
        )
    return label


def launchd_paths(label: str, *, home: Path | None = None) -> LaunchdPaths:
    _check_label(label)
    home = Path.home() if home is None else home
    return LaunchdPaths(
        plist=home / "Library" / "LaunchAgents" / f"{label}.plist",
        log=home / "Library" / "Logs" / "tickq" / f"{label}.log",
    )


def launchd_plist(
    *,
    label: str,
    program_arguments: Sequence[str],
    interval_seconds: int,
    working_directory: Path,
    stdout_path: Path,
    stderr_path: Path,
    environment: Mapping[str, str],
    stop_timeout_seconds: int = DEFAULT_STOP_TIMEOUT,
) -> bytes:
    """The agent's plist (XML). launchd starts ProgramArguments at the clock-aligned minutes
    of StartCalendarInterval (an interval that does not divide an hour: every StartInterval
    seconds), once at load, never while the previous run is still going, and coalesces the runs
    missed during sleep into one. See launchd/tickq.plist.template for what each key does."""
    _check_label(label)
    argv = check_argv(program_arguments)
    check_interval(interval_seconds)
    check_positive("stop_timeout_seconds", stop_timeout_seconds)
    env = check_environment(environment)
    minutes = aligned_minutes(interval_seconds)
    schedule: dict[str, Any] = (
        {"StartCalendarInterval": [{"Minute": m} for m in minutes]} if minutes is not None
        else {"StartInterval": interval_seconds}
    )
    plist = {
        "Label": label,
        "ProgramArguments": argv,
        **schedule,
        # One tick right after install (and at each login): the first one is not a tick away.
        "RunAtLoad": True,
        "WorkingDirectory": str(check_absolute("working_directory", working_directory)),
        "StandardOutPath": str(check_absolute("stdout_path", stdout_path)),
        "StandardErrorPath": str(check_absolute("stderr_path", stderr_path)),
        "EnvironmentVariables": env,
        "ProcessType": "Background",
        "AbandonProcessGroup": False,
        "ExitTimeOut": stop_timeout_seconds,
    }
    return plistlib.dumps(plist, fmt=plistlib.FMT_XML, sort_keys=False)


def launchctl_domain(uid: int) -> str:
    return f"gui/{uid}"


def launchctl_bootout_argv(uid: int, label: str) -> list[str]:
    return ["launchctl", "bootout", f"{launchctl_domain(uid)}/{_check_label(label)}"]


def launchctl_enable_argv(uid: int, label: str) -> list[str]:
    """Clears a `launchctl disable` left from earlier, which would make bootstrap fail."""
    return ["launchctl", "enable", f"{launchctl_domain(uid)}/{_check_label(label)}"]


def launchctl_bootstrap_argv(uid: int, plist_path: Path) -> list[str]:
    return ["launchctl", "bootstrap", launchctl_domain(uid), str(plist_path)]


def launchctl_print_argv(uid: int, label: str) -> list[str]:
    """Exits 0 while the service is loaded."""
    return ["launchctl", "print", f"{launchctl_domain(uid)}/{_check_label(label)}"]


def launchd_install(plist_bytes: bytes, label: str, *, home: Path | None = None) -> Path:
    """Write the plist to ~/Library/LaunchAgents, unload any older copy and load this one.
    Returns the plist's path."""
    require_platform("darwin", "launchd")
    plist = _parse_plist(plist_bytes, label)
    path = launchd_paths(label, home=home).plist
    for key in ("StandardOutPath", "StandardErrorPath"):
        Path(plist[key]).parent.mkdir(parents=True, exist_ok=True)
    write_private(path, plist_bytes)
    uid = os.getuid()
    run(launchctl_bootout_argv(uid, label))  # fails when it was not loaded: fine
    run(launchctl_enable_argv(uid, label))
    for attempt in range(_BOOTSTRAP_TRIES):
        result = run(launchctl_bootstrap_argv(uid, path))
        if result.returncode == 0:
            return path
        if attempt + 1 < _BOOTSTRAP_TRIES:
            time.sleep(_BOOTSTRAP_PAUSE)
    raise failed(result, f"launchd did not load {path}")


def launchd_uninstall(label: str, *, home: Path | None = None) -> bool:
    """Unload the agent and remove its plist (the log stays). False when it was not there."""
    require_platform("darwin", "launchd")
    path = launchd_paths(label, home=home).plist
    uid = os.getuid()
    run(launchctl_bootout_argv(uid, label))  # fails when it was not loaded: checked below
    still = run(launchctl_print_argv(uid, label))
    if still.returncode == 0:
        raise TimerError(
            f"launchd still has {launchctl_domain(uid)}/{label} loaded after bootout;\n"
            f"  try: launchctl bootout {launchctl_domain(uid)}/{label}"
        )
    existed = path.exists()
    path.unlink(missing_ok=True)
    return existed


def _parse_plist(plist_bytes: bytes, label: str) -> dict:
    try:
        plist = plistlib.loads(plist_bytes)
    except Exception as e:  # plistlib raises several types for bad input
        raise TimerError(f"not a valid plist: {e}") from e
    if not isinstance(plist, dict) or plist.get("Label") != label:
        found = plist.get("Label") if isinstance(plist, dict) else None
        raise TimerError(f"the plist's Label is {found!r}, expected {label!r}")
    for key in ("StandardOutPath", "StandardErrorPath"):
        if not isinstance(plist.get(key), str) or not Path(plist[key]).is_absolute():
            raise TimerError(f"the plist's {key} must be an absolute path")
    return plist
