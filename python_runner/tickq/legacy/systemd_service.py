"""A service unit's `[Service]` section as the commands systemd 252 started for it, in order:
`ExecStartPre=`, `ExecStart=`, `ExecStartPost=`, then `ExecStop=` (each command line unquoted,
its specifiers resolved, its `$VAR`s expanded from the environment systemd gave it), where it
ran (`WorkingDirectory=`), as whom (`User=`) and for how long (`TimeoutStartSec=`,
`RuntimeMaxSec=`). What a tickq chain cannot do the same way is refused with the reason; what
it does otherwise is said in a note."""

from __future__ import annotations

import pwd
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tickq.legacy.oldjob import OldCommand
from tickq.legacy.systemd_env import build
from tickq.legacy.systemd_words import (
    UnitName,
    WordError,
    expand,
    first_word,
    resolve_specifiers,
    specifiers,
)
from tickq.legacy.unitfile import Assignment, last, timespan, values

S = "Service"
PHASES = (("ExecStartPre", "start_pre"), ("ExecStart", "start"), ("ExecStartPost", "start_post"),
          ("ExecStop", "stop"))
REFUSED_PHASES = {
    "ExecCondition": "skips the run without failing when it exits 1-254, which tickq has no "
                     "way to say",
    "ExecStopPost": "runs even after a failed step, which a tickq chain (stopping at the first "
                    "failure) cannot",
}
_PREFIX_NOTES = {
    "+": "ran with full privileges (as root, outside User= and the sandbox)",
    "!": "ran without User='s credentials (as root)",
}


class ServiceRefused(ValueError):
    """The service cannot run as a tickq kind: one line."""


@dataclass
class Service:
    steps: list[OldCommand] = field(default_factory=list)
    timeout: int | None = None
    user: str | None = None
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class CommandLine:
    phase: str  # ExecStart, ...
    argv: tuple[str, ...]  # unquoted, specifiers resolved; variables not yet expanded
    ignore_failure: bool
    expand_variables: bool
    line: int


def read_service(units: Sequence[Assignment], unit: UnitName, root: Path,
                 read: Callable[[Path], str]) -> Service:
    """The service's commands and settings; ServiceRefused when tickq cannot run it."""
    known = specifiers(unit)
    for key, why in REFUSED_PHASES.items():
        if values(units, S, key):
            raise ServiceRefused(f"{key}= {why}")
    if last(units, S, "RootDirectory") or last(units, S, "RootImage"):
        raise ServiceRefused("runs in its own root folder (RootDirectory=/RootImage=), which "
                             "tickq does not set up")
    service = Service(user=_setting(units, "User"))
    lines: list[CommandLine] = []
    for key, _ in PHASES:
        for a in values(units, S, key):
            found, notes = command_lines(key, a, known)
            lines += found
            service.notes += notes
    kind = _service_type(units, lines, service.notes)
    env = build([a.value for a in values(units, S, "Environment")],
                [a.value for a in values(units, S, "EnvironmentFile")], known, root, read)
    for name in _unset_names(units):
        env.values.pop(name, None)
    service.notes += env.notes
    cwd = _working_directory(units, unit, service.user, known, service.notes)
    service.steps = _steps(lines, env.values, _user_variables(service.user), cwd,
                           service.notes)
    service.timeout = _timeout(units, kind, service.notes)
    _user_notes(units, service)
    return service


def command_lines(key: str, a: Assignment,
                  known: dict[str, str]) -> tuple[list[CommandLine], list[str]]:
    """The command lines of one Exec*= value, split at lone ";" words ("\\;" is a ";" word),
    and a note for each privilege prefix."""
    found: list[CommandLine] = []
    notes: list[str] = []
    pos = 0
    try:
        while True:
            word, pos = first_word(a.value, pos)
            if word is None:
                return found, notes
            line, pos, note = _command_line(key, a, word, pos, known)
            found.append(line)
            notes += note
    except WordError as e:
        raise ServiceRefused(f"line {a.line}: {key}=: {e}") from None


def _command_line(key: str, a: Assignment, first: str, pos: int,
                  known: dict[str, str]) -> tuple[CommandLine, int, list[str]]:
    """One command line from its first word on: (it, where the next starts, its notes)."""
    prefixes, path = _prefixes(first)
    doubled = "!!" in first[:len(first) - len(path)]  # "!!": no effect with ambient capabilities
    path = resolve_specifiers(path, known)
    if not path or ("/" in path and not path.startswith("/")):
        raise WordError(f"{path or first!r} is neither an absolute path nor a program name")
    argv, pos = _arguments(a.value, pos, known)
    if "@" in prefixes:
        if not argv or argv[0] not in (path, Path(path).name):
            shown = argv[0] if argv else ""
            raise WordError(f"'@' starts {path} with argv[0] {shown!r}; tickq passes the "
                            "program itself as argv[0]")
        argv = argv[1:]
    notes = [f"{key}={first} ... {what}; tickq runs every step as its own user"
             for p, what in _PREFIX_NOTES.items() if p in prefixes and not (p == "!" and doubled)]
    line = CommandLine(key, (path, *argv), "-" in prefixes, ":" not in prefixes, a.line)
    return line, pos, notes


def _arguments(text: str, pos: int, known: dict[str, str]) -> tuple[list[str], int]:
    """The words after a program up to a lone ";" (or the end), and where that ends."""
    argv: list[str] = []
    while True:
        while pos < len(text) and text[pos] in " \t\n\r":
            pos += 1
        if text.startswith(";", pos) and text[pos + 1:pos + 2] in ("", " ", "\t"):
            return argv, pos + 1
        if text.startswith("\\;", pos) and text[pos + 2:pos + 3] in ("", " ", "\t"):
            word, pos = ";", pos + 2
        else:
            word, pos = first_word(text, pos)
        if word is None:
            return argv, pos
        argv.append(resolve_specifiers(word, known))


def _prefixes(word: str) -> tuple[set[str], str]:
    found: set[str] = set()
    while word[:1] in ("-", "@", ":", "+", "!"):
        found.add(word[0])
        word = word[1:]
    return found, word


def _setting(units: Sequence[Assignment], key: str) -> str | None:
    found = last(units, S, key)
    return found.value if found and found.value else None


def _service_type(units: Sequence[Assignment], lines: list[CommandLine],
                  notes: list[str]) -> str:
    """Type= as systemd defaults it, checked against the number of ExecStart= lines."""
    starts = [c for c in lines if c.phase == "ExecStart"]
    kind = _setting(units, "Type") or ("simple" if starts else "oneshot")
    if kind != "oneshot" and len(starts) != 1:
        raise ServiceRefused(f"Type={kind} with {len(starts)} ExecStart= commands: systemd "
                             "refuses the service (only Type=oneshot takes several or none)")
    if not lines:
        raise ServiceRefused("no command to run (no ExecStart=)")
    if kind not in ("oneshot", "simple"):
        notes.append(f"Type={kind}: systemd treated the service as started "
                     f"{_STARTED.get(kind, 'in its own way')}; tickq runs each command to its "
                     "end, one after the other")
    elif kind == "simple" and any(c.phase == "ExecStartPost" for c in lines):
        notes.append("Type=simple: systemd ran ExecStartPost= as soon as ExecStart= had "
                     "started; here it runs after ExecStart= ends")
    return kind


_STARTED = {"exec": "once its program was executed", "forking": "when its program forked into "
            "the background", "notify": "when it said READY=1", "dbus": "when it took its "
            "D-Bus name", "idle": "after other jobs were dispatched"}


def _unset_names(units: Sequence[Assignment]) -> list[str]:
    return [w.partition("=")[0] for a in values(units, S, "UnsetEnvironment")
            for w in a.value.split()]


def _user_variables(user: str | None) -> dict[str, str]:
    """$USER, $LOGNAME, $HOME and $SHELL as systemd sets them for a service with User=: for
    expanding a command line only (tickq runs the command as its own user)."""
    if user is None:
        return {}
    found = {"USER": user, "LOGNAME": user}
    try:
        entry = pwd.getpwnam(user) if not user.isdigit() else pwd.getpwuid(int(user))
    except (KeyError, OverflowError):
        return found
    return found | {"USER": entry.pw_name, "LOGNAME": entry.pw_name, "HOME": entry.pw_dir,
                    "SHELL": entry.pw_shell}


def _working_directory(units: Sequence[Assignment], unit: UnitName, user: str | None,
                       known: dict[str, str], notes: list[str]) -> str:
    """Where systemd ran the commands: WorkingDirectory= ("~": the User='s home, "-": a
    missing folder is no failure), else / (a user manager's: the home folder)."""
    setting = _setting(units, "WorkingDirectory")
    if setting is None:
        return unit.home if unit.user_manager else "/"
    optional = setting.startswith("-")
    path = resolve_specifiers(setting[1:] if optional else setting, known)
    if path == "~":
        path = _user_variables(user).get("HOME", unit.home) if user else unit.home
        if user and "HOME" not in _user_variables(user):
            raise ServiceRefused(f"WorkingDirectory=~ is the home folder of {user}, who has "
                                 "no account here to read it from")
    if not path.startswith("/"):
        raise ServiceRefused(f"WorkingDirectory={setting} is not an absolute path: systemd "
                             "refuses it")
    if optional:
        notes.append(f"WorkingDirectory=-{path}: systemd ran it in / when that folder was "
                     "missing; tickq reports the run as failed instead")
    return path


def _steps(lines: list[CommandLine], env: dict[str, str], user_vars: dict[str, str],
           cwd: str, notes: list[str]) -> list[OldCommand]:
    """Each command line with its variables expanded, named by its phase."""
    steps: list[OldCommand] = []
    counts: dict[str, int] = {}
    unset: set[str] = set()
    for c in lines:
        argv = list(c.argv)
        if c.expand_variables:
            argv = expand(argv, {**user_vars, **env}, unset)
        name = dict(PHASES)[c.phase]
        counts[name] = counts.get(name, 0) + 1
        steps.append(OldCommand(tuple(argv), cwd, dict(env), c.ignore_failure,
                                name if counts[name] == 1 else f"{name}_{counts[name]}"))
    if unset:
        names = ", ".join(f"${n}" for n in sorted(unset))
        notes.append(f"{names} expanded to nothing, as systemd expanded them (not set by "
                     "Environment= or EnvironmentFile=)")
    return steps


def _timeout(units: Sequence[Assignment], kind: str, notes: list[str]) -> int | None:
    """Seconds systemd let it run: a oneshot's start timeout (TimeoutStartSec=/TimeoutSec=,
    off by default), another type's RuntimeMaxSec= (TimeoutStartSec= bounds only its start)."""
    keys = ("TimeoutStartSec", "TimeoutSec") if kind == "oneshot" else ("RuntimeMaxSec",)
    found = [a for a in units if a.section == S and a.key in keys and a.value]
    if not found:
        return None
    try:
        seconds = timespan(found[-1].value)
    except ValueError as e:
        raise ServiceRefused(f"line {found[-1].line}: {found[-1].key}=: {e}") from None
    if not seconds:  # infinity, or 0: no limit
        return None
    return max(1, int(-(-seconds // 1)))


def _user_notes(units: Sequence[Assignment], service: Service) -> None:
    if service.user:
        service.notes.append(f"systemd ran it as user {service.user} (User=); tickq runs it as "
                             "the user its dispatcher runs as")
    group = _setting(units, "Group")
    if group:
        service.notes.append(f"systemd ran it with group {group} (Group=)")
    if (_setting(units, "DynamicUser") or "no").lower() in ("yes", "true", "1", "on"):
        service.notes.append("DynamicUser=yes: systemd ran it as a throw-away user")
