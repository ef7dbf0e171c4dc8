"""A launchd job (a LaunchAgent or LaunchDaemon property list, XML or binary) read as
launchd.plist(5) defines it into one `OldJob`: `StartCalendarInterval` (a dictionary or an
array of them; a missing key is a wildcard, so {Hour = 3} fires every minute of hour 3;
Weekday 0 and 7 are Sunday; a Day and a Weekday both given fire on either, as cron does) or
`StartInterval`; the command from `ProgramArguments`/`Program` (Program is what runs, the
array its argv); `WorkingDirectory`, `EnvironmentVariables`, `UserName`. A job with no schedule
(a daemon kept alive, one started at load or by a path) is refused; what launchd does beside the
schedule is said in a note."""

from __future__ import annotations

import os
import plistlib
import stat
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from tickq.legacy.clock import host_zone as this_host_zone
from tickq.legacy.clock_changes import clock_note
from tickq.legacy.oldjob import OldCommand, OldJob, Refusal
from tickq.legacy.schedule_terms import Event, Inexpressible, event, schedule_of
from tickq.registry.durations import format_duration

PLIST_MAX = 16 << 20
LAUNCHD_PATH = "/usr/bin:/bin:/usr/sbin:/sbin"  # launchd's PATH for the jobs it starts
_CALENDAR_KEYS = {"Minute": (0, 59), "Hour": (0, 23), "Day": (1, 31), "Weekday": (0, 7),
                  "Month": (1, 12)}
_TRIGGERS = {"RunAtLoad": "at load (login or boot)", "KeepAlive": "and kept it running",
             "WatchPaths": "when a watched path changed",
             "QueueDirectories": "while a queue folder was not empty",
             "StartOnMount": "when a file system was mounted",
             "Sockets": "on a connection", "MachServices": "on a message"}
_HANDLED = frozenset(("Label", "Program", "ProgramArguments", "StartCalendarInterval",
                      "StartInterval", "WorkingDirectory", "EnvironmentVariables", "UserName",
                      "GroupName", "Disabled", "StandardOutPath", "StandardErrorPath",
                      "EnableGlobbing", "InitGroups", "ExitTimeOut", "ThrottleInterval",
                      *_TRIGGERS))
_HOST = object()


class PlistRefused(ValueError):
    """The job cannot move: one line."""


def is_plist(path: Path) -> bool:
    return path.name.endswith(".plist")


def read_plist(path: Path, host_zone: object = _HOST,
               read: Callable[[Path], bytes] | None = None) -> list[OldJob | Refusal]:
    """The job of the property list at `path`: one OldJob or one Refusal. `host_zone`: the
    zone launchd read the calendar in (default: this machine's; None: unknown)."""
    zone = this_host_zone() if host_zone is _HOST else host_zone
    try:
        data = _load((read or read_bytes)(path))
        label = data.get("Label")
        if not isinstance(label, str) or not label:
            raise PlistRefused("no Label (launchd refuses a job without one)")
        return [_job(path, label, data, zone if isinstance(zone, str) else None)]
    except (PlistRefused, Inexpressible) as e:
        where = _where(path, locals().get("label"))
        return [Refusal(path, where, " ".join(str(e).split()), legacy=where)]


def _where(path: Path, label: object) -> str:
    return label if isinstance(label, str) and label else path.name


def read_bytes(path: Path) -> bytes:
    """A regular file of at most PLIST_MAX bytes, opened without blocking on a FIFO."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as e:
        raise PlistRefused(f"cannot read: {e.strerror or e}") from None
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise PlistRefused("not a regular file")
        data = f.read(PLIST_MAX + 1)
    if len(data) > PLIST_MAX:
        raise PlistRefused(f"larger than {PLIST_MAX >> 20} MiB: not a launchd job")
    return data


def _load(data: bytes) -> dict[str, Any]:
    try:
        loaded = plistlib.loads(data)
    except Exception as e:  # noqa: BLE001 - plistlib raises many kinds for a bad file
        raise PlistRefused(f"not a property list ({type(e).__name__}: {e})") from None
    if not isinstance(loaded, dict):
        raise PlistRefused("a property list whose top is not a dictionary: not a launchd job")
    return loaded


def _job(path: Path, label: str, data: Mapping[str, Any], zone: str | None) -> OldJob:
    schedule, notes, gap = _schedule(data, zone)
    command, command_notes = _command(data)
    notes += command_notes + _notes(data)
    user = data.get("UserName") if isinstance(data.get("UserName"), str) else None
    return OldJob(source=path, where=label, legacy=label, schedule=schedule,
                  steps=(command,), timeout=None, notes=tuple(notes), user=user,
                  name_hint=label.rsplit(".", 1)[-1] or label, gap=gap)


# ---------------------------------------------------------------- schedule


def _schedule(data: Mapping[str, Any],
              zone: str | None) -> tuple[dict[str, Any], list[str], int]:
    """The schedule keys, notes, and the shortest time between two slots (seconds)."""
    calendar, interval = data.get("StartCalendarInterval"), data.get("StartInterval")
    if calendar is not None and interval is not None:
        raise PlistRefused("both StartCalendarInterval and StartInterval, which launchd runs "
                           "independently; one tickq schedule cannot say both")
    if interval is not None:
        return _interval(interval)
    if calendar is not None:
        return _calendar(calendar, zone)
    started = [why for key, why in _TRIGGERS.items() if _on(data.get(key))]
    if started:
        raise PlistRefused(f"no schedule: launchd starts it {' '.join(started[:2])}; not a "
                           "scheduled job")
    raise PlistRefused("no schedule (no StartCalendarInterval or StartInterval)")


def _on(value: object) -> bool:
    return bool(value) if not isinstance(value, (dict, list)) else len(value) > 0


def _interval(value: object) -> tuple[dict[str, Any], list[str], int]:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise PlistRefused(f"StartInterval must be a whole number of seconds, got {value!r}")
    every = format_duration(value)
    return {"every": every}, [
        f"StartInterval={value}: launchd ran it every {every} counted from when it loaded the "
        f"job; tickq runs it every {every} on the clock (:00, ...)"], value


def _calendar(value: object, zone: str | None) -> tuple[dict[str, Any], list[str], int]:
    entries = value if isinstance(value, list) else [value]
    if not entries:
        raise PlistRefused("StartCalendarInterval is an empty array: launchd never runs it")
    events = [_event(n, e) for n, e in enumerate(entries, start=1)]
    utc = zone in ("UTC", "Etc/UTC")
    schedule = schedule_of(events, utc=utc)
    keys = dict(schedule.keys)
    notes: list[str] = []
    if "every" not in keys:
        if zone is None:
            notes.append("launchd read it in the Mac's time zone, which is not known here: "
                         "the registry's timezone applies; set timezone if they differ")
        else:
            keys["timezone"] = "UTC" if utc else zone
            notes.append(f"launchd read it in the Mac's time zone, taken to be this "
                         f"machine's ({zone}): set timezone if they differ")
    clock = clock_note(events, schedule.rule, zone, "launchd") if zone else None
    if clock:
        notes.append(clock + " (launchd's own rule is not documented)")
    return keys, notes, schedule.gap


def _event(n: int, entry: object) -> Event:
    where = f"StartCalendarInterval item {n}"
    if not isinstance(entry, dict):
        raise PlistRefused(f"{where} is not a dictionary")
    fields: dict[str, int] = {}
    for key, item in entry.items():
        if key not in _CALENDAR_KEYS:
            raise PlistRefused(f"{where}: unknown key {key!r} (Minute, Hour, Day, Weekday, "
                               "Month)")
        low, high = _CALENDAR_KEYS[key]
        if isinstance(item, bool) or not isinstance(item, int) or not low <= item <= high:
            raise PlistRefused(f"{where}: {key} must be a whole number from {low} to {high}, "
                               f"got {item!r}")
        fields[key] = item
    hours = [fields["Hour"]] if "Hour" in fields else range(24)
    minutes = [fields["Minute"]] if "Minute" in fields else range(60)
    weekday = fields.get("Weekday")
    return event([h * 60 + m for h in hours for m in minutes],
                 weekdays=None if weekday is None else [weekday or 7],
                 days=[fields["Day"]] if "Day" in fields else None,
                 months=[fields["Month"]] if "Month" in fields else None, either=True)


# ---------------------------------------------------------------- command and the rest


def _command(data: Mapping[str, Any]) -> tuple[OldCommand, list[str]]:
    program, arguments = data.get("Program"), data.get("ProgramArguments")
    if arguments is not None and (not isinstance(arguments, list) or not arguments
                                  or not all(isinstance(a, str) for a in arguments)):
        raise PlistRefused("ProgramArguments must be a non-empty array of strings")
    if program is not None and (not isinstance(program, str) or not program):
        raise PlistRefused("Program must be a string")
    if program is None and arguments is None:
        raise PlistRefused("no Program or ProgramArguments: nothing to run")
    notes = []
    argv = [program] if arguments is None else list(arguments)
    if program is not None and argv[0] != program:
        notes.append(f"launchd started {program} (Program) with argv[0] {argv[0]!r}; tickq "
                     "passes the program itself as argv[0]")
        argv[0] = program
    if data.get("EnableGlobbing") is True and any(set(a) & set("*?[~{$") for a in argv):
        raise PlistRefused("EnableGlobbing: launchd expanded wildcards and ~ in the arguments "
                           "when it started the job, which tickq does not")
    env = _environment(data.get("EnvironmentVariables"))
    cwd = data.get("WorkingDirectory", "/")
    if not isinstance(cwd, str) or not cwd.startswith("/"):
        raise PlistRefused(f"WorkingDirectory must be an absolute path, got {cwd!r}")
    return OldCommand(tuple(argv), cwd, env), notes


def _environment(value: object) -> dict[str, str]:
    if value is None:
        return {"PATH": LAUNCHD_PATH}
    if not isinstance(value, dict) or not all(isinstance(k, str) and isinstance(v, str)
                                              for k, v in value.items()):
        raise PlistRefused("EnvironmentVariables must be a dictionary of strings")
    return {"PATH": LAUNCHD_PATH, **value}


def _notes(data: Mapping[str, Any]) -> list[str]:
    notes = []
    if data.get("Disabled") is True:
        notes.append("Disabled: launchd did not load it (unless enabled by launchctl); the "
                     "kind runs on its schedule")
    for key, why in (("RunAtLoad", _TRIGGERS["RunAtLoad"]),
                     ("KeepAlive", "again whenever it exited")):
        if _on(data.get(key)):
            notes.append(f"{key}: launchd also started it {why}; tickq runs it on its "
                         "schedule only")
    for key in ("WatchPaths", "QueueDirectories", "StartOnMount"):
        if _on(data.get(key)):
            notes.append(f"{key}: launchd also started it {_TRIGGERS[key]}; tickq does not")
    for key in ("StandardOutPath", "StandardErrorPath"):
        if isinstance(data.get(key), str):
            notes.append(f"{key}: launchd appended its output to {data[key]}; tickq keeps the "
                         "output's tail with each run (tickq history)")
    for key in ("UserName", "GroupName"):
        if isinstance(data.get(key), str):
            notes.append(f"{key}: launchd ran it as {data[key]}; tickq runs it as the user "
                         "its dispatcher runs as")
    ignored = sorted(k for k in data if k not in _HANDLED)
    if ignored:
        notes.append(f"not imported: {', '.join(ignored)} (launchd applied them; tickq does "
                     "not)")
    return notes


def read(path: Path, text: str) -> list[OldJob | Refusal]:
    """The reader `legacy import` calls: a plist is read as bytes (a binary one is no text)."""
    del text
    return read_plist(path)
