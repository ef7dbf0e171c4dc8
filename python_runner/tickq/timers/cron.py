"""A crontab line that runs `tickq tick`, for machines with neither launchd nor systemd.

Unlike launchd and systemd, cron starts a tick even while the previous one still runs (the
runner's leases in SQL keep that safe, but it is wasted work)."""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from pathlib import Path

from tickq.timers.common import (
    TimerError,
    check_absolute,
    check_argv,
    check_environment,
    check_interval,
)

LOG_MAX_BYTES = 10 * 1024 * 1024  # the cron line's log, then one older copy


def cron_schedule(interval_seconds: int) -> str:
    """The five schedule fields for "every `interval_seconds`"; cron can only express whole
    minutes that divide an hour (or exactly one hour) as an even interval."""
    check_interval(interval_seconds)
    minutes, rest = divmod(interval_seconds, 60)
    if rest == 0 and minutes == 60:
        return "0 * * * *"
    if rest == 0 and minutes == 1:
        return "* * * * *"
    if rest == 0 and 60 % minutes == 0:
        return f"*/{minutes} * * * *"
    raise TimerError(
        f"cron cannot run something every {interval_seconds}s: its finest unit is a minute and "
        "*/N restarts at every full hour, so only 1, 2, 3, 4, 5, 6, 10, 12, 15, 20, 30 or 60 "
        "minutes make even intervals.\n"
        "  Set the registry's tick to one of those, or use a systemd timer (Linux) or launchd "
        "(macOS), which take any number of seconds."
    )


def crontab_line(
    *,
    program_arguments: Sequence[str],
    interval_seconds: int,
    working_directory: Path,
    environment: Mapping[str, str],
    log_path: Path,
) -> str:
    """`*/N * * * * cd DIR && ROTATE && K=V ... exec ARGV >> LOG 2>&1`, quoted for /bin/sh,
    with `%` written `\\%` (cron turns an unescaped `%` into a newline and feeds the rest to
    stdin). ROTATE keeps the log bounded: past LOG_MAX_BYTES it becomes LOG.1 (the one before
    is dropped)."""
    schedule = cron_schedule(interval_seconds)
    argv = check_argv(program_arguments)
    env = check_environment(environment)
    cwd = str(check_absolute("working_directory", working_directory))
    log = str(check_absolute("log_path", log_path))
    parts = [cwd, log, *argv, *env.values()]
    if any("\n" in p or "\r" in p for p in parts):
        raise TimerError("a crontab line cannot hold a newline; use a systemd timer or launchd")
    assignments = [f"{k}={shlex.quote(v)}" for k, v in env.items()]
    qlog = shlex.quote(log)
    rotate = (f"{{ test ! -f {qlog} || test $(wc -c < {qlog}) -lt {LOG_MAX_BYTES} "
              f"|| mv -f {qlog} {shlex.quote(log + '.1')}; }}")
    command = " ".join(
        [
            "cd",
            shlex.quote(cwd),
            "&&",
            rotate,
            "&&",
            *assignments,
            "exec",
            *map(shlex.quote, argv),
            ">>",
            shlex.quote(log),
            "2>&1",
        ]
    )
    return f"{schedule} {command.replace('%', chr(92) + '%')}"
