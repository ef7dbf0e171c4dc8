"""The `tickq launchd|systemd|cron` commands: what wakes `tickq tick` every `tick` of the registry.

Each timer runs `<this tickq> tick` in the registry's folder with TICKQ_REGISTRY set to the
registry's absolute path (and DATABASE_URL / TICKQ_DATA_DIR when they are set now). A password
in DATABASE_URL goes to a libpq passfile (PGPASSFILE, mode 0600), never into the timer.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from functools import wraps
from pathlib import Path

from tickq import timers as os_timers
from tickq.db.errors import EXIT_OK, InvalidInput
from tickq.registry import load_registry
from tickq.registry.place import as_given

Command = Callable[[argparse.Namespace], int]


def _timer_errors(command: Command) -> Command:
    """A timer that cannot be built or installed is an invalid configuration (exit 2)."""

    @wraps(command)
    def run(args: argparse.Namespace) -> int:
        try:
            return command(args)
        except os_timers.TimerError as exc:
            raise InvalidInput(str(exc)) from None

    return run


class _Setup:
    def __init__(self, args: argparse.Namespace) -> None:
        registry = load_registry(args.registry)
        # As given: a timer of a deploy's `current` link runs every release behind it.
        self.registry_path = as_given(args.registry)
        self.folder = self.registry_path.parent
        self.name = os_timers.timer_name(args.name or registry.settings.project
                                         or self.folder.name)
        self.interval = registry.settings.tick
        environ = dict(os.environ)
        if args.database_url:
            environ["DATABASE_URL"] = args.database_url
        # Uninstalling needs no environment: write no passfile for it.
        passfile = None if args.action == "uninstall" else os_timers.keep_password_out(environ)
        if passfile is not None:
            print(f"tickq: the database password is kept in {passfile} (mode 0600), "
                  "not in the timer", file=sys.stderr)
        self.environment = os_timers.timer_environment(
            registry_path=self.registry_path, environ=environ
        )
        script = Path(sys.executable).parent / "tickq"
        self.argv = [str(script), "tick"] if script.exists() else [
            sys.executable, "-m", "tickq.cli", "tick"
        ]


@_timer_errors
def cmd_launchd(args: argparse.Namespace) -> int:
    setup = _Setup(args)
    label = os_timers.launchd_label(setup.name)
    paths = os_timers.launchd_paths(label)
    if args.action == "uninstall":
        removed = os_timers.launchd_uninstall(label)
        print(f"removed {paths.plist}" if removed else f"{label} was not installed")
        return EXIT_OK
    plist = os_timers.launchd_plist(
        label=label, program_arguments=setup.argv, interval_seconds=setup.interval,
        working_directory=setup.folder, stdout_path=paths.log, stderr_path=paths.log,
        environment=setup.environment,
    )
    if args.action == "print":
        sys.stdout.write(plist.decode())
        return EXIT_OK
    path = os_timers.launchd_install(plist, label)
    print(f"installed {path}; logs in {paths.log}")
    return EXIT_OK


@_timer_errors
def cmd_systemd(args: argparse.Namespace) -> int:
    setup = _Setup(args)
    system = getattr(args, "system", False)
    if args.action == "uninstall":
        removed = os_timers.systemd_uninstall(setup.name, system=system)
        print("removed" if removed else "not installed")
        return EXIT_OK
    units = os_timers.systemd_units(
        name=setup.name, program_arguments=setup.argv, interval_seconds=setup.interval,
        working_directory=setup.folder, environment=setup.environment,
    )
    if args.action == "print":
        for filename, text in units.items():
            print(f"# {os_timers.systemd_unit_dir(system=system) / filename}\n{text}")
        return EXIT_OK
    for path in os_timers.systemd_install(units, system=system):
        print(f"installed {path}")
    return EXIT_OK


@_timer_errors
def cmd_cron(args: argparse.Namespace) -> int:
    setup = _Setup(args)
    print(os_timers.crontab_line(
        program_arguments=setup.argv, interval_seconds=setup.interval,
        working_directory=setup.folder, environment=setup.environment,
        log_path=setup.folder / "tickq.log",
    ))
    return EXIT_OK

