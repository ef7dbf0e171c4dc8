"""Independent references for imported schedules, and the comparison the legacy tests share.

`systemd_elapses` asks systemd 252's own `systemd-analyze calendar` (Debian's systemd package;
it needs no systemd as PID 1), `cron_instants` asks cronsim; `tickq_slots` asks the database's
one calendar (tickq.schedule_slots) for the imported schedule. `compare` puts them side by side
over a window and allows only the instants where tickq's documented clock-change rule differs
from the old system's, each named (Python's zoneinfo, a third implementation, says which)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import zoneinfo
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from psycopg.types.json import Jsonb

from tickq.legacy.systemd_timing import translate
from tickq.registry.durations import parse_duration

_ELAPSE = re.compile(r"^\s*(Next elapse|Iter\. #\d+): \w+ (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) (\S+)$")
_IN_UTC = re.compile(r"^\s*\(in UTC\): \w+ (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) UTC$")


def systemd_analyze() -> str:
    """The systemd-analyze program; on Linux its absence fails the test (make test installs
    it: scripts/systemd-tools.sh), elsewhere the test is not for this machine."""
    found = shutil.which("systemd-analyze")
    if found is None:
        if not sys.platform.startswith("linux"):
            pytest.skip("systemd-analyze exists on Linux only")
        pytest.fail("systemd-analyze is missing: run scripts/systemd-tools.sh install")
    return found


def systemd_elapses(expressions: Sequence[str], base: datetime, count: int,
                    host_zone: str) -> list[list[datetime]]:
    """The next `count` elapses after `base` of each expression, as systemd computes them on a
    host whose zone is `host_zone` (in UTC)."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "TZ": host_zone, "LANG": "C",
           "SYSTEMD_COLORS": "0", "SYSTEMD_PAGER": ""}
    result = subprocess.run(
        [systemd_analyze(), "calendar", f"--iterations={count}",
         f"--base-time={base.astimezone(UTC):%Y-%m-%d %H:%M:%S} UTC", *expressions],
        capture_output=True, text=True, env=env, timeout=60, check=False)
    assert result.returncode == 0, result.stderr
    blocks: list[list[datetime | None]] = []
    for line in result.stdout.splitlines():
        if "Normalized form:" in line:
            blocks.append([])
        elif m := _ELAPSE.match(line):
            stamp = datetime.fromisoformat(m.group(2)).replace(tzinfo=UTC)
            blocks[-1].append(stamp if m.group(3) == "UTC" else None)
        elif m := _IN_UTC.match(line):
            blocks[-1][-1] = datetime.fromisoformat(m.group(1)).replace(tzinfo=UTC)
    assert len(blocks) == len(expressions), result.stdout
    assert all(None not in b for b in blocks), result.stdout
    return [[s for s in b if s is not None] for b in blocks]


def slots_until(conn: Any, keys: Mapping[str, Any], base: datetime, until: datetime,
                guess: int) -> list[datetime]:
    """tickq's slots after `base` up to `until` at least, asked `guess` at a time, doubled."""
    while True:
        ours = tickq_slots(conn, keys, base, guess)
        if len(ours) < guess or ours[-1] >= until:
            return ours
        guess *= 2


def tickq_slots(conn: Any, keys: Mapping[str, Any], base: datetime, count: int) -> list[datetime]:
    """The next `count` slots after `base` of the registry schedule `keys`, by tickq.next_slot."""
    entry = {k: parse_duration(v) if k in ("every", "offset") else v for k, v in keys.items()}
    rows = conn.execute("SELECT at FROM tickq.schedule_slots('imported', %s, 'UTC', %s, %s)",
                        (Jsonb(entry), count, base)).fetchall()
    return [r[0].astimezone(UTC) for r in rows]


@dataclass(frozen=True)
class Difference:
    at: datetime
    only_in: str  # "tickq" or the old system's name
    why: str  # the rule that explains it, "" when none does
    note: tuple[str, ...]  # words one of the kind's notes must hold for it...
    any_of: tuple[str, ...] = ()  # ...and one of these, when given

    def line(self) -> str:
        return f"{self.at:%Y-%m-%d %H:%M:%S}Z only in {self.only_in}: {self.why or 'UNEXPLAINED'}"


def compare(old: Iterable[datetime], ours: Iterable[datetime], zone: str, old_name: str,
            until: datetime) -> list[Difference]:
    """Every instant before `until` in one list only, each with the rule that explains it:
    tickq runs a skipped wall time one gap later and a repeated one at its second pass or at
    both, where the old system skips the one and runs the other's first pass; systemd 252 also
    misses the first slot of a day (hour, month, year) that a wrapping repetition carries past."""
    old_set = {t for t in old if t < until}
    ours_sorted = sorted(t for t in ours if t < until)
    our_set = set(ours_sorted)
    tz = zoneinfo.ZoneInfo(zone)
    found = []
    for i, t in enumerate(ours_sorted):
        if t in old_set:
            continue
        why = _second_pass(t, tz) or _gap_later(t, tz)
        if why:
            found.append(Difference(t, "tickq", why, ("clock changes",)))
            continue
        periods = _new_periods(ours_sorted[i - 1] if i else None, t, tz)
        found.append(Difference(t, "tickq", f"the first slot of a new {periods[0]}, which "
                                f"{old_name} carries past" if periods else "",
                                ("first slot of a new",), periods))
    for t in sorted(old_set - our_set):
        why = _first_pass(t, tz)
        if why and t + _fold_length(t, tz) not in our_set:
            why = ""
        found.append(Difference(t, old_name, why, ("clock changes",)))
    return found


def _new_periods(before: datetime | None, t: datetime, tz: zoneinfo.ZoneInfo) -> tuple[str, ...]:
    """The periods (year, month, day, hour; largest first) that `t` starts anew after
    `before`: a new month is a new day too."""
    if before is None:
        return ()
    a, b = before.astimezone(tz), t.astimezone(tz)
    return tuple(period for period, key in (("year", "%Y"), ("month", "%Y-%m"),
                                            ("day", "%Y-%m-%d"), ("hour", "%Y-%m-%d %H"))
                 if a.strftime(key) != b.strftime(key))


def has_note(notes: Iterable[str], d: Difference) -> bool:
    """Whether one of `notes` says what explains `d`."""
    return any(all(word in note for word in d.note)
               and (not d.any_of or any(word in note for word in d.any_of)) for note in notes)


def _local(t: datetime, tz: zoneinfo.ZoneInfo) -> datetime:
    return t.astimezone(tz)


def _ambiguous(local: datetime) -> bool:
    return local.replace(fold=0).utcoffset() != local.replace(fold=1).utcoffset()


def _fold_length(t: datetime, tz: zoneinfo.ZoneInfo) -> timedelta:
    local = _local(t, tz)
    return abs(local.replace(fold=0).utcoffset() - local.replace(fold=1).utcoffset())


def _second_pass(t: datetime, tz: zoneinfo.ZoneInfo) -> str:
    local = _local(t, tz)
    if _ambiguous(local) and local.fold == 1:
        return (f"{local:%H:%M} {local.tzname()} is the second pass of a wall time a fall-back "
                "change repeats (tickq runs it, the old system ran only the first)")
    return ""


def _first_pass(t: datetime, tz: zoneinfo.ZoneInfo) -> str:
    local = _local(t, tz)
    if _ambiguous(local) and local.fold == 0:
        return (f"{local:%H:%M} {local.tzname()} is the first pass of a repeated wall time "
                "(tickq runs an at time at its second pass)")
    return ""


def _gap_later(t: datetime, tz: zoneinfo.ZoneInfo) -> str:
    before, after = (t - timedelta(hours=6)).astimezone(tz), t.astimezone(tz)
    gap = after.utcoffset() - before.utcoffset()
    if gap <= timedelta(0):
        return ""
    wall = after.replace(tzinfo=None) - gap
    back = wall.replace(tzinfo=tz).astimezone(UTC).astimezone(tz).replace(tzinfo=None)
    if back == wall:
        return ""  # that wall time exists: no gap explains this instant
    return (f"{wall:%Y-%m-%d %H:%M} does not exist in {tz.key} (a spring-forward gap): tickq "
            "runs it one gap later, the old system skipped it")


def window_end(per_expression: Sequence[Sequence[datetime]], base: datetime, count: int,
               span: timedelta = timedelta(days=4), at_least: int = 30) -> datetime:
    """The end of the window to compare: `span` after `base`, or later until the union holds
    `at_least` instants, but never past the last instant of a list cut at `count` (past it that
    expression's instants are unknown)."""
    union = sorted({t for times in per_expression for t in times})
    wanted = base + span
    if len(union) >= at_least:
        wanted = max(wanted, union[at_least - 1] + timedelta(seconds=1))
    complete = [times[-1] for times in per_expression if len(times) == count]
    return min([wanted, *complete])


SYSTEMD_COUNT = 300


def clock_bases(zone: str) -> list[datetime]:
    """Three hours before each clock change of 2027 in `zone` (so even a minutely schedule's
    300 slots cross it), and a day before the end of a leap February; a sparse schedule's
    window runs on to its 30th slot, past month and year ends."""
    tz = zoneinfo.ZoneInfo(zone)
    found = []
    at = datetime(2027, 1, 1, tzinfo=UTC)
    while at.year == 2027:
        if (at + timedelta(hours=1)).astimezone(tz).utcoffset() != at.astimezone(tz).utcoffset():
            found.append(at + timedelta(hours=1) - timedelta(hours=3))
        at += timedelta(hours=1)
    return [*found, datetime(2028, 2, 27, 12, tzinfo=UTC)]


def check_against_systemd(conn: Any, expressions: list[str], zone: str,
                          keys: Mapping[str, Any] | None = None,
                          notes: Sequence[str] | None = None) -> list[str]:
    """Each difference between systemd's elapses and the slots of `keys` (default: the
    translation of `expressions`) over every base, as a line; a difference no rule explains,
    or one the kind has no note for, fails."""
    t = translate(expressions, zone)
    keys = t.keys if keys is None else keys
    notes = t.notes if notes is None else notes
    kind_zone = keys.get("timezone", zone)
    lines = []
    for base in clock_bases(zone):
        old = systemd_elapses(expressions, base, SYSTEMD_COUNT, zone)
        until = window_end(old, base, SYSTEMD_COUNT)
        union = {s for times in old for s in times}
        ours = slots_until(conn, {k: v for k, v in keys.items() if k != "catch_up"}, base,
                           until, len([s for s in union if s < until]) + 60)
        for d in compare(union, ours, kind_zone, "systemd", until):
            assert d.why, f"{expressions} as {keys}: {d.line()}"
            assert has_note(notes, d), f"{expressions} as {keys}: no note for {d.line()}"
            lines.append(d.line())
    return lines
