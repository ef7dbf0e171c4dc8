"""A timer unit's `[Timer]` section as one tickq schedule: its `OnCalendar=` events
(systemd_timing), or a monotonic cadence (`OnUnitActiveSec=`, `OnUnitInactiveSec=`) as the
nearest clock-aligned `every`; `OnBootSec=`/`OnStartupSec=`/`OnActiveSec=` alone (once after a
start) refused, beside a schedule dropped with a note; `Persistent=`, `RandomizedDelaySec=`
(with `FixedRandomDelay=`) and `AccuracySec=` mapped to the nearest tickq behaviour (catch_up, a
fixed offset chosen from the unit's name) with a note saying what differs."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from tickq.legacy.schedule_terms import Inexpressible
from tickq.legacy.systemd_timing import translate
from tickq.legacy.unitfile import Assignment, boolean, last, timespan
from tickq.registry.durations import format_duration, parse_duration

T = "Timer"
CALENDAR = "OnCalendar"
CADENCES = {"OnUnitActiveSec": "after its service last started",
            "OnUnitInactiveSec": "after its service's last run ended"}
ONCE = {"OnBootSec": "after boot", "OnStartupSec": "after the service manager started",
        "OnActiveSec": "after the timer itself was started"}
TRIGGERS = (CALENDAR, *CADENCES, *ONCE)
CATCH_UP_FROM = 2 * 3600  # Persistent=false maps to catch_up on schedules this sparse
CATCH_UP = 3600


@dataclass
class TimerSchedule:
    keys: dict[str, Any]
    notes: list[str] = field(default_factory=list)
    gap: int | None = None  # the shortest time between two slots, seconds (OldJob.gap)


def read_timer(units: Sequence[Assignment], name: str, host_zone: str | None) -> TimerSchedule:
    """The schedule of timer `name`; Inexpressible (or CalendarError) says why there is none."""
    triggers = _triggers(units)
    calendars = [a.value for a in triggers if a.key == CALENDAR]
    spans = [(a.key, _seconds(a)) for a in triggers if a.key != CALENDAR]
    cadences = sorted({(k, s) for k, s in spans if k in CADENCES})
    once = [(k, s) for k, s in spans if k in ONCE]
    if calendars and cadences:
        raise Inexpressible("it fires both on a calendar (OnCalendar=) and a time after its "
                            "service ran; one tickq schedule cannot say both")
    if calendars:
        schedule = _calendar(units, calendars, host_zone)
    elif cadences:
        schedule = _cadence(cadences)
    elif once:
        k, s = once[0]
        raise Inexpressible(f"it fires only once, {_span(s)} {ONCE[k]} ({k}=): tickq has no "
                            "boot, only schedules")
    else:
        raise Inexpressible("it has no trigger (no OnCalendar= or On...Sec=), so systemd never "
                            "fires it")
    for k, s in once:
        schedule.notes.append(f"{k}={_span(s)} dropped: systemd also ran it {_span(s)} "
                              f"{ONCE[k]}; a kind new to tickq's queue runs at its first slot")
    _random_delay(units, name, schedule)
    _other_keys(units, schedule)
    return schedule


def _triggers(units: Sequence[Assignment]) -> list[Assignment]:
    """The triggers in effect: an empty assignment to any of them drops all before it."""
    kept: list[Assignment] = []
    for a in units:
        if a.section == T and a.key in TRIGGERS:
            kept = [] if a.value == "" else [*kept, a]
    return kept


def _seconds(a: Assignment) -> float:
    try:
        seconds = timespan(a.value)
    except ValueError as e:
        raise Inexpressible(f"line {a.line}: {a.key}=: {e}") from None
    if seconds is None:
        raise Inexpressible(f"line {a.line}: {a.key}=infinity never fires")
    return seconds


def _span(seconds: float) -> str:
    return format_duration(max(1, round(seconds)))


def _calendar(units: Sequence[Assignment], calendars: list[str],
              host_zone: str | None) -> TimerSchedule:
    t = translate(calendars, host_zone)
    schedule = TimerSchedule(dict(t.keys), list(t.notes), t.schedule.gap)
    persistent = last(units, T, "Persistent")
    if not (persistent and _true(persistent)) and t.schedule.gap >= CATCH_UP_FROM:
        schedule.keys["catch_up"] = format_duration(CATCH_UP)
        schedule.notes.append(
            f"Persistent=false: systemd did not make up a run missed while the machine was "
            f"off; here a slot more than {format_duration(CATCH_UP)} late is skipped "
            "(catch_up; raise it if the dispatcher's tick is longer)")
    return schedule


def _cadence(cadences: list[tuple[str, float]]) -> TimerSchedule:
    if len({s for _, s in cadences}) > 1 or len(cadences) > 1:
        shown = ", ".join(f"{k}={_span(s)}" for k, s in cadences)
        raise Inexpressible(f"it fires after several spans ({shown}); tickq's every is one")
    key, seconds = cadences[0]
    every = _span(seconds)
    return TimerSchedule({"every": every}, [
        f"{key}={every}: systemd ran it {every} {CADENCES[key]}, so the runs drift; tickq runs "
        f"it every {every} on the clock, whatever a run's length (and not only once something "
        "first started the service)"], max(1, round(seconds)))


def _random_delay(units: Sequence[Assignment], name: str, schedule: TimerSchedule) -> None:
    """RandomizedDelaySec= as a fixed offset below an every cadence (FixedRandomDelay=yes is
    exactly that); beside a calendar, a note."""
    found = last(units, T, "RandomizedDelaySec")
    delay = _seconds(found) if found and found.value else 0
    if delay >= 1 and "every" in schedule.keys:
        every = parse_duration(schedule.keys["every"])
        shift = _stable_shift(name, min(delay, every))
        if shift:
            base = parse_duration(schedule.keys.pop("offset", "0s") or "0s")
            if (base + shift) % every:
                schedule.keys["offset"] = format_duration((base + shift) % every)
            schedule.notes.append(
                f"RandomizedDelaySec={_span(delay)}: systemd delayed each run by a random "
                f"0..{_span(delay)}; here a fixed offset of {format_duration(shift)}, chosen "
                "from the unit's name, spreads it the same way without chance")
    elif delay >= 1:
        fixed = last(units, T, "FixedRandomDelay")
        how = ("a delay of 0.." + _span(delay) + " fixed per machine (FixedRandomDelay=yes)"
               if fixed and fixed.value and _true(fixed) else f"a random 0..{_span(delay)}")
        schedule.notes.append(
            f"RandomizedDelaySec={_span(delay)}: systemd delayed each run by {how}; tickq runs "
            "it at its slot (tickq check --suggest offers offsets that spread load)")
    accuracy = last(units, T, "AccuracySec")
    if accuracy and accuracy.value and (_seconds(accuracy) or 0) > 60:
        schedule.notes.append(
            f"AccuracySec={_span(_seconds(accuracy))}: systemd could run it that late to bunch "
            "wake-ups; tickq runs it at its slot, at the next tick")


def _stable_shift(name: str, below: float) -> int:
    """A shift in 0..below (whole minutes when below is a minute or more), the same for the
    same unit name everywhere."""
    digest = int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "big")
    limit = int(below)
    if limit < 1:
        return 0
    shift = digest % limit
    return shift - shift % 60 if limit >= 60 else shift


def _true(a: Assignment) -> bool:
    try:
        return boolean(a.value)
    except ValueError:
        raise Inexpressible(f"line {a.line}: {a.key}={a.value} is no boolean") from None


def _other_keys(units: Sequence[Assignment], schedule: TimerSchedule) -> None:
    for key, what in (("OnClockChange", "the system clock jumped"),
                      ("OnTimezoneChange", "the time zone changed"),
                      ("WakeSystem", "")):
        found = last(units, T, key)
        if found and found.value and _true(found):
            schedule.notes.append(f"{key}=yes: systemd also ran it when {what}; tickq does not"
                                  if what else "WakeSystem=yes: systemd woke the machine from "
                                  "suspend to run it; tickq does not")
