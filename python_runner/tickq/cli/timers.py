"""The `tickq launchd|systemd|cron` commands: what wakes `tickq tick` every `tick` of the registry.

Each timer runs `<this tickq> tick` in the registry's folder with TICKQ_REGISTRY set to the
registry's absolute path (and DATABASE_URL / TICKQ_DATA_DIR when they are set now). A password
in DATABASE_URL goes to a libpq passfile (PGPASSFILE, mode 0600), never into the timer.
"""

from __future__ import annotations

import argparse
import os
import pwd
import stat
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
    """What a timer runs, where, with what environment; `run_as`: the user a system unit runs
    it as (None: the user running this command)."""

    def __init__(self, args: argparse.Namespace, run_as: pwd.struct_passwd | None = None) -> None:
        registry = load_registry(args.registry)
        # As given: a timer of a deploy's `current` link runs every release behind it.
        self.registry_path = as_given(args.registry)
        self.folder = self.registry_path.parent
        self.name = os_timers.timer_name(args.name or registry.settings.project
                                         or self.folder.name)
        self.interval = registry.settings.tick
        script = Path(sys.executable).parent / "tickq"
        self.argv = [str(script), "tick"] if script.exists() else [
            sys.executable, "-m", "tickq.cli", "tick"
        ]
        environ = dict(os.environ)
        if args.database_url:
            environ["DATABASE_URL"] = args.database_url
        if args.action == "uninstall":  # needs no environment: write no passfile for it
            return
        other = run_as is not None and run_as.pw_uid != os.geteuid()
        if other:
            _check_reachable(run_as, [Path(self.argv[0]).parent, self.folder])
            if os_timers.holds_password(environ):
                raise InvalidInput(
                    f"DATABASE_URL holds a password, which {run_as.pw_name} could not read "
                    f"from {pwd.getpwuid(os.geteuid()).pw_name}'s passfile: put it in a "
                    f"passfile of {run_as.pw_name}'s (its ~/.pgpass, or one PGPASSFILE names; "
                    "mode 0600) and give DATABASE_URL without it")
        passfile = os_timers.keep_password_out(environ)
        if passfile is not None:
            print(f"tickq: the database password is kept in {passfile} (mode 0600), "
                  "not in the timer", file=sys.stderr)
        self.environment = os_timers.timer_environment(
            registry_path=self.registry_path, environ=environ,
            program_dir=Path(self.argv[0]).parent, uid=run_as.pw_uid if other else None)


def _invoking_user() -> str:
    """Who runs this command: under sudo, the user who ran sudo."""
    sudo = os.environ.get("SUDO_USER")
    if os.geteuid() == 0 and sudo and sudo != "root":
        return sudo
    return pwd.getpwuid(os.geteuid()).pw_name


def _run_as(args: argparse.Namespace) -> pwd.struct_passwd | None:
    """The user a system unit runs the tick as (`User=`): --run-as, else the invoking user,
    never root unless named. None for a user unit, which runs as its manager's user."""
    named = getattr(args, "run_as", None)
    if not getattr(args, "system", False):
        if named:
            raise InvalidInput("--run-as needs --system: a user unit runs as the user whose "
                               "systemd manager runs it")
        return None
    name = named or _invoking_user()
    try:
        user = pwd.getpwnam(name)
    except KeyError:
        raise InvalidInput(f"--run-as {name}: no such user here; make one for the tick "
                           f"(useradd --system {name}) or name another") from None
    if user.pw_uid == 0 and not named:
        raise InvalidInput(
            "a system unit would run every tick as root: name the user it runs as with "
            "--run-as USER (a user of its own: useradd --system tickq), or --run-as root")
    return user


def _check_reachable(user: pwd.struct_passwd, folders: list[Path]) -> None:
    """Refuse a unit whose user cannot pass to the tickq it runs or the registry's folder."""
    from tickq.db.embedded_install import User, reachable_by

    who = User(user.pw_name, user.pw_uid, user.pw_gid)
    for folder in folders:
        blocked = reachable_by(who, folder)
        if blocked is not None:
            mode = stat.S_IMODE(blocked.stat().st_mode)
            raise InvalidInput(
                f"{user.pw_name} cannot reach {folder}: {blocked} is mode {mode:04o}; put the "
                f"venv and the registry where {user.pw_name} can read them (under /opt or "
                "/srv, say), or name another user with --run-as")


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
    system = getattr(args, "system", False)
    if args.action == "uninstall":
        removed = os_timers.systemd_uninstall(_Setup(args).name, system=system)
        print("removed" if removed else "not installed")
        return EXIT_OK
    run_as = _run_as(args)
    setup = _Setup(args, run_as)
    units = os_timers.systemd_units(
        name=setup.name, program_arguments=setup.argv, interval_seconds=setup.interval,
        working_directory=setup.folder, environment=setup.environment,
        user=run_as.pw_name if run_as is not None else None,
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

