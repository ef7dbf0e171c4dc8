"""What wakes `tickq tick` periodically: a launchd agent (macOS), a systemd user timer (Linux) or
a crontab line (anywhere else).

Everything that decides *what* to install is pure and tested: the plist bytes, the unit texts,
the crontab line and the argv lists handed to launchctl/systemctl. The side-effecting functions
(`launchd_install`, `launchd_uninstall`, `systemd_install`, `systemd_uninstall`) only write those
files and run those argv lists, and raise `TimerError` with the tool's stderr when it fails.

The three timers differ in what happens when a tick runs longer than the interval: launchd and
systemd never start a second copy of a job that is still running; cron does (the runner's leases
in SQL keep that safe, but it is wasted work).

The files contain `environment`, but never a password: timer_environment refuses a DATABASE_URL
that holds one, and keep_password_out moves it to a libpq passfile (mode 0600) first. The files
are still written with mode 0600.
"""

from __future__ import annotations

import os
import plistlib
import re
import shlex
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import psycopg
from psycopg import conninfo

from tickq.host.ledger import default_folder

DEFAULT_NAME = "tick"
LABEL_PREFIX = "dev.tickq."
DEFAULT_STOP_TIMEOUT = 30  # seconds between SIGTERM and SIGKILL when the timer stops a tick

# Variables copied from the installing shell into the timer's environment, when set. None of
# them may hold a password: libpq reads it from PGPASSFILE (see keep_password_out).
PASSED_THROUGH = (
    "PATH", "DATABASE_URL", "TICKQ_DATA_DIR", "PGPASSFILE", "PGSERVICE", "PGSERVICEFILE",
)

_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}\Z")
_LABEL = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}\Z")

# launchctl may report a failure for a bootstrap that follows a bootout too closely (the old
# instance is still being torn down); retry a few times before giving up.
_BOOTSTRAP_TRIES = 4
_BOOTSTRAP_PAUSE = 0.5


class TimerError(Exception):
    """The timer cannot be built or installed; the message says why and what to do instead."""


# ---------------------------------------------------------------------------------------------
# Names and environment


def timer_name(text: str | None = None) -> str:
    """A name usable in a launchd label, a systemd unit name and a file name, from free text
    such as the registry's folder name: lower case, runs of other characters become "-",
    at most 64 characters; "tick" when nothing is left."""
    if not text:
        return DEFAULT_NAME
    name = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:64].strip("-")
    return name or DEFAULT_NAME


def launchd_label(name: str = DEFAULT_NAME) -> str:
    """`dev.tickq.<name>`."""
    return LABEL_PREFIX + _check_name(name)


def timer_environment(*, registry_path: Path, environ: Mapping[str, str]) -> dict[str, str]:
    """The variables a timer should pass to `tickq tick`: TICKQ_REGISTRY (absolute) and those
    of PASSED_THROUGH that are set in `environ` (normally os.environ). launchd and cron start
    programs with a minimal PATH, so the installing shell's PATH is kept. TICKQ_RUN_DIR is
    always set, to the ledger folder this shell's `tickq run` uses: launchd does not give a job
    the terminal's TMPDIR, and a timer's tick must find the commands a manual run left behind."""
    env = {key: environ[key] for key in PASSED_THROUGH if environ.get(key)}
    if env.get("DATABASE_URL") and split_password(env["DATABASE_URL"])[1] is not None:
        raise TimerError(
            "DATABASE_URL holds a password, which a timer file would keep in clear: "
            "move it to a passfile first (keep_password_out)"
        )
    env["TICKQ_REGISTRY"] = str(Path(registry_path).absolute())
    env["TICKQ_RUN_DIR"] = str(default_folder(environ))
    return env


def split_password(url: str) -> tuple[str, str | None]:
    """`url` without its password (as a key=value conninfo string), and the password (None when
    there is none; then `url` comes back as it was)."""
    try:
        params = conninfo.conninfo_to_dict(url)
    except psycopg.ProgrammingError as exc:
        raise TimerError(f"DATABASE_URL is not a connection string libpq reads: {exc}") from None
    password = params.pop("password", None)
    if not password:
        return url, None
    return conninfo.make_conninfo("", **params), str(password)


def _pgpass_escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace(":", "\\:")


def _pgpass_fields(url: str) -> list[str]:
    """host, port, database and user of a pgpass line for connections like `url` (`*` where
    `url` leaves one open; `localhost` is libpq's name for no host)."""
    params = conninfo.conninfo_to_dict(url)
    host = str(params.get("host") or "localhost")
    fields = ["*" if "," in host else host]  # several hosts: one line for all of them
    fields += [str(params.get(key) or "*") for key in ("port", "dbname", "user")]
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
    stripped, password = split_password(url)
    if password is None:
        return None
    path = default_passfile(environ)
    key = ":".join(_pgpass_fields(stripped)) + ":"
    kept = path.read_text().splitlines() if path.exists() else []
    kept = [old for old in kept if not old.startswith(key)]
    line = pgpass_line(stripped, password)
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    _write_private(path, ("\n".join([*kept, line]) + "\n").encode())
    environ["DATABASE_URL"] = stripped
    environ["PGPASSFILE"] = str(path)
    return path


# ---------------------------------------------------------------------------------------------
# launchd (macOS)


class LaunchdPaths(NamedTuple):
    plist: Path  # ~/Library/LaunchAgents/<label>.plist
    log: Path  # ~/Library/Logs/tickq/<label>.log


def launchd_paths(label: str, *, home: Path | None = None) -> LaunchdPaths:
    _check_label(label)
    home = Path.home() if home is None else home
    return LaunchdPaths(
        plist=home / "Library" / "LaunchAgents" / f"{label}.plist",
        log=home / "Library" / "Logs" / "tickq" / f"{label}.log",
    )


def aligned_minutes(interval_seconds: int) -> list[int] | None:
    """The minutes of each hour a clock-aligned timer fires at (`every` cadences land on
    :00, :05, :10... the same way), when the interval is whole minutes that divide an hour;
    None for any other interval, which then counts from the timer's start."""
    minutes, rest = divmod(interval_seconds, 60)
    if rest or minutes < 1 or 60 % minutes:
        return None
    return list(range(0, 60, minutes))


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
    argv = _check_argv(program_arguments)
    _check_interval(interval_seconds)
    _check_positive("stop_timeout_seconds", stop_timeout_seconds)
    env = _check_environment(environment)
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
        "WorkingDirectory": str(_check_absolute("working_directory", working_directory)),
        "StandardOutPath": str(_check_absolute("stdout_path", stdout_path)),
        "StandardErrorPath": str(_check_absolute("stderr_path", stderr_path)),
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
    _require_platform("darwin", "launchd")
    plist = _parse_plist(plist_bytes, label)
    path = launchd_paths(label, home=home).plist
    for key in ("StandardOutPath", "StandardErrorPath"):
        Path(plist[key]).parent.mkdir(parents=True, exist_ok=True)
    _write_private(path, plist_bytes)
    uid = os.getuid()
    _run(launchctl_bootout_argv(uid, label))  # fails when it was not loaded: fine
    _run(launchctl_enable_argv(uid, label))
    for attempt in range(_BOOTSTRAP_TRIES):
        result = _run(launchctl_bootstrap_argv(uid, path))
        if result.returncode == 0:
            return path
        if attempt + 1 < _BOOTSTRAP_TRIES:
            time.sleep(_BOOTSTRAP_PAUSE)
    raise _failed(result, f"launchd did not load {path}")


def launchd_uninstall(label: str, *, home: Path | None = None) -> bool:
    """Unload the agent and remove its plist (the log stays). False when it was not there."""
    _require_platform("darwin", "launchd")
    path = launchd_paths(label, home=home).plist
    uid = os.getuid()
    _run(launchctl_bootout_argv(uid, label))  # fails when it was not loaded: checked below
    still = _run(launchctl_print_argv(uid, label))
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


# ---------------------------------------------------------------------------------------------
# systemd (Linux, `systemctl --user`)


class SystemdUnits(NamedTuple):
    service: str  # tickq-<name>.service
    timer: str  # tickq-<name>.timer


def systemd_unit_names(name: str = DEFAULT_NAME) -> SystemdUnits:
    _check_name(name)
    return SystemdUnits(f"tickq-{name}.service", f"tickq-{name}.timer")


SYSTEM_UNIT_DIR = Path("/etc/systemd/system")


def systemd_unit_dir(*, home: Path | None = None, system: bool = False) -> Path:
    """~/.config/systemd/user, where `systemctl --user` looks for a user's own units; with
    `system`, /etc/systemd/system (units the system manager runs, as root)."""
    if system:
        return SYSTEM_UNIT_DIR
    return (Path.home() if home is None else home) / ".config" / "systemd" / "user"


def systemd_bus_problem(*, system: bool = False) -> str | None:
    """Why systemctl cannot reach the manager the units are for (None when it can): checked
    before anything is written, so a failed install leaves no unit files behind."""
    argv = ["systemctl", *([] if system else ["--user"]), "show", "--property=Version"]
    result = _run(argv)
    if result.returncode == 0:
        return None
    detail = (result.stderr or result.stdout or "").strip().splitlines()
    cause = detail[-1] if detail else f"exit {result.returncode}"
    if system:
        return (f"systemd is not running here ({cause}): use `tickq cron print` and add the "
                "line with `crontab -e`")
    advice = ("as root, install a system unit instead: `tickq systemd install --system`"
              if os.geteuid() == 0 else
              "log in to a session with a user manager, and for a server run "
              f"`loginctl enable-linger {_user()}` once")
    return (f"no systemd user manager to talk to ({cause}): {advice}; "
            "or use `tickq cron print` and add the line with `crontab -e`")


def _user() -> str:
    import getpass

    return getpass.getuser()


def systemd_units(
    *,
    name: str = DEFAULT_NAME,
    program_arguments: Sequence[str],
    interval_seconds: int,
    working_directory: Path,
    environment: Mapping[str, str],
    stop_timeout_seconds: int = DEFAULT_STOP_TIMEOUT,
    start_timeout_seconds: int | None = None,
) -> dict[str, str]:
    """{unit file name: text} for a oneshot service running `program_arguments` and a timer
    starting it every `interval_seconds`. Output goes to the journal
    (`journalctl --user -u tickq-<name>.service`).

    `start_timeout_seconds` bounds a whole tick (systemd kills it after that); None, the default
    for oneshot services, lets a tick run as long as its jobs do. While a tick runs, the timer
    starts no second one."""
    units = systemd_unit_names(name)
    argv = _check_argv(program_arguments)
    _check_interval(interval_seconds)
    _check_positive("stop_timeout_seconds", stop_timeout_seconds)
    if start_timeout_seconds is not None:
        _check_positive("start_timeout_seconds", start_timeout_seconds)
    env = _check_environment(environment)
    cwd = str(_check_absolute("working_directory", working_directory))
    if cwd != cwd.strip() or "\n" in cwd or "\r" in cwd:
        raise TimerError(f"systemd cannot use a working directory like {cwd!r}")

    service = [
        "# Generated by tickq (tickq.timers.units.systemd_units); regenerate rather than edit.",
        "[Unit]",
        f"Description=tickq tick ({name})",
        "",
        "[Service]",
        "Type=oneshot",
        f"WorkingDirectory={_systemd_specifiers(cwd)}",
        *(f"Environment={systemd_quote(f'{k}={v}')}" for k, v in env.items()),
        f"ExecStart={systemd_exec_line(argv)}",
        # When the tick's main process exits, whatever is left in the unit's cgroup is killed,
        # also jobs that left tickq's process group.
        "KillMode=control-group",
        f"TimeoutStopSec={stop_timeout_seconds}s",
        *([f"TimeoutStartSec={start_timeout_seconds}s"] if start_timeout_seconds else []),
        "",
    ]
    timer = [
        "# Generated by tickq (tickq.timers.units.systemd_units); regenerate rather than edit.",
        "[Unit]",
        f"Description=Run tickq tick ({name}) every {interval_seconds}s",
        "",
        "[Timer]",
        *_systemd_schedule(interval_seconds),
        "AccuracySec=1s",
        # After a sleep or a reboot, a missed OnCalendar= time runs once at once.
        "Persistent=true",
        f"Unit={units.service}",
        "",
        "[Install]",
        "WantedBy=timers.target",
        "",
    ]
    return {units.service: "\n".join(service), units.timer: "\n".join(timer)}


def _systemd_schedule(interval_seconds: int) -> list[str]:
    minutes = aligned_minutes(interval_seconds)
    if minutes is not None:
        # On the clock, like the `every` cadences it serves: *:0/5 is :00, :05, :10...
        step = 60 // len(minutes)
        return [f"OnCalendar=*:0/{step}" if step < 60 else "OnCalendar=*:00"]
    return [
        # Already in the past when the timer is started after boot: then it elapses at once.
        "OnBootSec=1min",
        f"OnUnitActiveSec={interval_seconds}s",
        # A oneshot service is never "active" (activating -> inactive), which some systemd
        # versions mishandle for OnUnitActiveSec=; this one keeps the timer going regardless
        # and is never earlier than the line above.
        f"OnUnitInactiveSec={interval_seconds}s",
    ]


def systemd_quote(word: str) -> str:
    """One word for a unit file line that systemd splits into words (ExecStart=, Environment=):
    double-quoted, C escapes for backslash, quote and control characters, and `%%` for `%`
    (systemd expands %-specifiers, also inside quotes)."""
    if "\0" in word:
        raise TimerError("systemd cannot pass a NUL character")
    out = []
    for ch in word:
        if ch in '\\"':
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\x{ord(ch):02x}")
        elif ch == "%":
            out.append("%%")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def systemd_exec_line(argv: Sequence[str]) -> str:
    """The value of ExecStart=: each argument quoted by systemd_quote, and `$$` for `$` (systemd
    substitutes $VAR and ${VAR} in command lines)."""
    return " ".join(systemd_quote(arg).replace("$", "$$") for arg in argv)


def _systemd_specifiers(text: str) -> str:
    return text.replace("%", "%%")


def systemctl_user_argv(*args: str, system: bool = False) -> list[str]:
    return ["systemctl", *([] if system else ["--user"]), *args]


def systemctl_daemon_reload_argv(system: bool = False) -> list[str]:
    return systemctl_user_argv("daemon-reload", system=system)


def systemctl_enable_argv(timer_unit: str, system: bool = False) -> list[str]:
    return systemctl_user_argv("enable", timer_unit, system=system)


def systemctl_restart_argv(timer_unit: str, system: bool = False) -> list[str]:
    """Starts the timer, or re-arms a running one so a changed interval takes effect."""
    return systemctl_user_argv("restart", timer_unit, system=system)


def systemctl_disable_argv(timer_unit: str, system: bool = False) -> list[str]:
    return systemctl_user_argv("disable", "--now", timer_unit, system=system)


def systemd_install(
    units: Mapping[str, str], *, home: Path | None = None, system: bool = False
) -> list[Path]:
    """Write `units` (from systemd_units) to ~/.config/systemd/user, reload systemd and enable
    and (re)start the timer: the equivalent of `enable --now` that also applies a changed
    interval. Returns the files written.

    A user's timers run while that user has a session; for a server, also run
    `loginctl enable-linger <user>` once."""
    _require_platform("linux", "systemd")
    timers = [unit for unit in units if unit.endswith(".timer")]
    if len(timers) != 1 or not all(_is_tickq_unit(unit) for unit in units):
        raise TimerError(f"expected the units of systemd_units(), got {sorted(units)}")
    problem = systemd_bus_problem(system=system)
    if problem:
        raise TimerError(problem)
    unit_dir = systemd_unit_dir(home=home, system=system)
    unit_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for unit, text in units.items():
        _write_private(unit_dir / unit, text.encode())
        written.append(unit_dir / unit)
    _check(systemctl_daemon_reload_argv(system), "systemctl could not reload its units")
    _check(systemctl_enable_argv(timers[0], system), f"could not enable {timers[0]}")
    _check(systemctl_restart_argv(timers[0], system), f"could not start {timers[0]}")
    # One tick right away, so the first one is not a whole tick after install.
    service = timers[0].removesuffix(".timer") + ".service"
    _check(systemctl_user_argv("start", "--no-block", service, system=system),
           f"could not start {service}")
    return written


def systemd_uninstall(
    name: str = DEFAULT_NAME, *, home: Path | None = None, system: bool = False
) -> bool:
    """Stop and disable the timer, remove both unit files and reload. A tick that is running
    finishes. False when there was nothing to remove. Without a manager to talk to (no user
    bus), nothing can be running them: the files are removed all the same."""
    _require_platform("linux", "systemd")
    units = systemd_unit_names(name)
    unit_dir = systemd_unit_dir(home=home, system=system)
    paths = [unit_dir / units.service, unit_dir / units.timer]
    if not any(p.exists() for p in paths):
        return False
    reachable = systemd_bus_problem(system=system) is None
    if reachable and paths[1].exists():
        _check(systemctl_disable_argv(units.timer, system), f"could not disable {units.timer}")
    for p in paths:
        p.unlink(missing_ok=True)
    if reachable:
        _check(systemctl_daemon_reload_argv(system), "systemctl could not reload its units")
    return True


def _is_tickq_unit(unit: str) -> bool:
    m = re.fullmatch(r"tickq-(.+)\.(service|timer)", unit)
    return bool(m and _NAME.match(m.group(1)))


# ---------------------------------------------------------------------------------------------
# cron


def cron_schedule(interval_seconds: int) -> str:
    """The five schedule fields for "every `interval_seconds`"; cron can only express whole
    minutes that divide an hour (or exactly one hour) as an even interval."""
    _check_interval(interval_seconds)
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


LOG_MAX_BYTES = 10 * 1024 * 1024  # the cron line's log, then one older copy


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
    is dropped). Unlike launchd and systemd, cron starts a tick even while the previous one
    still runs."""
    schedule = cron_schedule(interval_seconds)
    argv = _check_argv(program_arguments)
    env = _check_environment(environment)
    cwd = str(_check_absolute("working_directory", working_directory))
    log = str(_check_absolute("log_path", log_path))
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


# ---------------------------------------------------------------------------------------------
# Validation and the thin side-effecting helpers


def _check_name(name: str) -> str:
    if not isinstance(name, str) or not _NAME.match(name):
        raise TimerError(
            f"timer name {name!r} must be 1-64 letters, digits, '-' or '_', starting with a "
            "letter or digit; timer_name() makes one from any text"
        )
    return name


def _check_label(label: str) -> str:
    if not isinstance(label, str) or not _LABEL.match(label):
        raise TimerError(
            f"launchd label {label!r} must be letters, digits, '.', '-' or '_' "
            f"(like {LABEL_PREFIX}{DEFAULT_NAME})"
        )
    return label


def _check_argv(argv: Sequence[str]) -> list[str]:
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


def _check_interval(seconds: int) -> None:
    _check_positive("interval_seconds", seconds)


def _check_positive(what: str, value: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise TimerError(f"{what} must be a whole number of seconds >= 1, not {value!r}")


def _check_absolute(what: str, path: Path) -> Path:
    path = Path(path)
    if not path.is_absolute():
        raise TimerError(f"{what} must be an absolute path, not {str(path)!r}")
    return path


def _check_environment(environment: Mapping[str, str]) -> dict[str, str]:
    env = dict(environment)
    for key, value in env.items():
        if not isinstance(key, str) or not _ENV_NAME.match(key):
            raise TimerError(f"environment variable name {key!r} is not a valid name")
        if not isinstance(value, str) or "\0" in value:
            raise TimerError(f"environment variable {key} must be a string without NUL")
    return env


def _require_platform(platform: str, tool: str) -> None:
    if not sys.platform.startswith(platform):
        other = {"darwin": "`tickq systemd install` (Linux) or `tickq cron print`",
                 "linux": "`tickq launchd install` (macOS) or `tickq cron print`"}
        raise TimerError(
            f"{tool} timers only exist on {platform}; this is {sys.platform}. "
            f"Use {other.get(platform, '`tickq cron print`')} instead."
        )


def _write_private(path: Path, data: bytes) -> None:
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


def _run(argv: list[str]) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(
            argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, check=False
        )
    except OSError as e:
        raise TimerError(f"cannot run {argv[0]}: {e}") from e


def _check(argv: list[str], what: str) -> None:
    result = _run(argv)
    if result.returncode != 0:
        raise _failed(result, what)


def _failed(result: subprocess.CompletedProcess[str], what: str) -> TimerError:
    detail = (result.stderr or result.stdout or "").strip() or "(no output)"
    return TimerError(
        f"{what}: `{shlex.join(result.args)}` exited with {result.returncode}:\n  {detail}"
    )
