"""A systemd timer with the service it starts, read from their unit files into one `OldJob`:
the `.timer` (and its `foo.timer.d/*.conf` drop-ins) gives the schedule (systemd_timer), the
service named by `Unit=` or by the timer's own name, found beside it (an instance
`foo@bar.service` also from its template `foo@.service`), gives the commands (systemd_service).
Whatever cannot run as a plain tickq kind is a `Refusal` naming the unit and the reason."""

from __future__ import annotations

import getpass
import os
from collections.abc import Callable
from pathlib import Path

from tickq.legacy import oldfile
from tickq.legacy.clock import host_zone as this_host_zone
from tickq.legacy.oldjob import OldJob, Refusal
from tickq.legacy.schedule_terms import Inexpressible
from tickq.legacy.systemd_calendar import CalendarError
from tickq.legacy.systemd_service import ServiceRefused, read_service
from tickq.legacy.systemd_timer import read_timer
from tickq.legacy.systemd_words import UnitName, WordError, resolve_specifiers, specifiers
from tickq.legacy.unitfile import Assignment, UnitSyntax, last, read_unit

_HOST = object()  # read_timer_unit's default: this machine's zone
_SERVICE_KEYS = frozenset((
    "Type", "ExecStartPre", "ExecStart", "ExecStartPost", "ExecStop", "Environment",
    "EnvironmentFile", "UnsetEnvironment", "WorkingDirectory", "User", "Group", "DynamicUser",
    "TimeoutStartSec", "TimeoutSec", "RuntimeMaxSec", "TimeoutStopSec", "RemainAfterExit",
    "SyslogIdentifier", "KillMode", "KillSignal", "SendSIGKILL", "GuessMainPID", "PIDFile",
))  # fmt: skip
_TIMER_KEYS = frozenset((
    "OnCalendar", "OnActiveSec", "OnBootSec", "OnStartupSec", "OnUnitActiveSec",
    "OnUnitInactiveSec", "Persistent", "RandomizedDelaySec", "FixedRandomDelay", "AccuracySec",
    "OnClockChange", "OnTimezoneChange", "WakeSystem", "Unit", "RemainAfterElapse",
))  # fmt: skip
_UNIT_NOTES = {"OnFailure": "systemd started {} when it failed; tickq's alert_command and "
                            "alert_after tell about failures",
               "OnSuccess": "systemd started {} after it succeeded; tickq does not"}


def is_timer(path: Path) -> bool:
    return path.name.endswith(".timer")


def read_timer_unit(path: Path, host_zone: object = _HOST, root: Path = Path("/"),
                    read: Callable[[Path], str] = oldfile.read) -> list[OldJob | Refusal]:
    """The job of the timer unit at `path` (one OldJob or one Refusal). `host_zone`: the zone
    its calendar events without one were read in (default: this machine's; None: unknown);
    `root`: where the host's other files (EnvironmentFile=) are; `read`: reads one file."""
    zone = this_host_zone() if host_zone is _HOST else host_zone
    name = path.name
    try:
        return [_job(path, name, zone if isinstance(zone, str) else None, root, read)]
    except (Inexpressible, CalendarError, ServiceRefused, UnitSyntax, WordError,
            oldfile.OldFileRefused) as e:
        return [Refusal(path, name, _one_line(str(e), path), legacy=name)]


def _one_line(text: str, path: Path) -> str:
    """The reason on one line, without the file's name a file error starts with."""
    return " ".join(text.removeprefix(f"{path}: ").split())


def _job(path: Path, name: str, zone: str | None, root: Path,
         read: Callable[[Path], str]) -> OldJob:
    if not is_timer(path):
        raise Inexpressible("not a .timer unit")
    stem = name.removesuffix(".timer")
    if stem.endswith("@"):
        raise Inexpressible(f"a template: systemd runs it only as instances ({stem}NAME.timer); "
                            "import an instance (a copy or link named so)")
    timer_units = _unit_with_dropins(path, read)
    timer = read_timer(timer_units, name, zone)
    service_name = _service_name(timer_units, name)
    service_path = _beside(path, service_name)
    units = _unit_with_dropins(service_path, read, instance_of=service_name)
    service = read_service(units, _unit_name(service_name, service_path), root, read)
    unit = _unit_name(service_name, service_path)
    manager = [f"a unit of {unit.user}'s own systemd (--user): its commands ran in the home "
               f"folder {unit.home} and with that manager's PATH (here systemd's system PATH)"
               ] if unit.user_manager else []
    notes = [*timer.notes, *service.notes, *manager,
             *_ignored(timer_units, "Timer", _TIMER_KEYS),
             *_ignored(units, "Service", _SERVICE_KEYS), *_unit_notes(units)]
    return OldJob(source=path, where=name, legacy=name, schedule=timer.keys,
                  steps=tuple(service.steps), timeout=service.timeout,
                  notes=tuple(dict.fromkeys(notes)), user=service.user,
                  name_hint=stem.replace("@", "_"), gap=timer.gap)


def _service_name(units: list[Assignment], timer: str) -> str:
    """Unit= (its specifiers resolved) or the timer's own name as a .service."""
    found = last(units, "Timer", "Unit")
    default = timer.removesuffix(".timer") + ".service"
    if not found or not found.value:
        return default
    known = specifiers(_unit_name(timer, None))
    target = resolve_specifiers(found.value, known)
    if not target.endswith(".service"):
        raise Inexpressible(f"it starts {target} (Unit=), not a service: tickq runs commands")
    return target


def _unit_name(name: str, path: Path | None) -> UnitName:
    """The unit as its specifiers see it: of the system manager (%h is /root), or of a user's
    manager when it lives in a systemd/user folder (%h is this user's home)."""
    if path is not None and "systemd/user" in path.parent.as_posix():
        return UnitName(name, str(Path.home()), getpass.getuser(), str(os.getuid()), True)
    return UnitName(name, "/root", "root", "0", False)


def _beside(timer: Path, service: str) -> Path:
    """The service's unit file in the timer's folder, or the template of an instance."""
    folder = timer.parent
    if (folder / service).exists():
        return folder / service
    stem, dot, suffix = service.rpartition(".")
    if "@" in stem:
        template = folder / f"{stem.split('@', 1)[0]}@.{suffix}"
        if template.exists():
            return template
    raise Inexpressible(f"it starts {service}, which is not beside it in {folder}")


def _unit_with_dropins(path: Path, read: Callable[[Path], str],
                       instance_of: str | None = None) -> list[Assignment]:
    """The unit's assignments, then those of its drop-ins (NAME.d/*.conf beside it, the
    template's before the instance's, in file-name order; a later file of a name wins)."""
    units = read_unit(read(path))
    folders = [path.parent / f"{path.name}.d"]
    if instance_of and instance_of != path.name:
        folders.append(path.parent / f"{instance_of}.d")
    confs: dict[str, Path] = {}
    for folder in folders:
        if folder.is_dir():
            confs |= {p.name: p for p in folder.glob("*.conf")}
    for conf_name in sorted(confs):
        units += read_unit(read(confs[conf_name]))
    return units


def _ignored(units: list[Assignment], section: str, handled: frozenset[str]) -> list[str]:
    keys = sorted({a.key for a in units if a.section == section and a.key not in handled
                   and a.value})
    if not keys:
        return []
    return [f"not imported from [{section}]: {', '.join(k + '=' for k in keys)} (systemd "
            "applied them; tickq does not)"]


def _unit_notes(units: list[Assignment]) -> list[str]:
    notes = []
    for key, text in _UNIT_NOTES.items():
        found = last(units, "Unit", key)
        if found and found.value:
            notes.append(text.format(found.value))
    conditions = sorted({a.key for a in units if a.section == "Unit" and a.value
                         and a.key.startswith(("Condition", "Assert"))})
    if conditions:
        notes.append(f"{', '.join(c + '=' for c in conditions)}: systemd skipped (or failed) "
                     "a run unless these held; tickq runs it regardless")
    return notes



# ---------------------------------------------------------------- for the import's file table


def read(path: Path, text: str) -> list[OldJob | Refusal]:
    """The reader `legacy import` calls with a `.timer`'s text already read."""
    def reading(p: Path) -> str:
        return text if p == path else oldfile.read(p)
    return read_timer_unit(path, read=reading)


def read_alone(path: Path, text: str) -> list[OldJob | Refusal]:
    """A service (or other unit) given without its timer: which timer to give instead."""
    del text  # a unit alone is refused whatever it says
    stem = path.name.rsplit(".", 1)[0]
    timers = sorted(p.name for p in path.parent.glob(f"{stem}*.timer")) if path.parent.is_dir() \
        else []
    hint = (f"import the timer that starts it ({', '.join(timers[:3])})" if timers else
            "no .timer of its name is beside it, so systemd starts it some other way (at "
            "boot, by a socket, a path or another unit): not a scheduled job")
    what = path.suffix.lstrip(".") or "unit"
    return [Refusal(path, path.name, f"a systemd {what} alone: {hint}")]
