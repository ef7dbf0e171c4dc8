"""The calendar in SQL (tickq.next_slot) against independent implementations, slot for slot:
random cron strings against cronsim, random calendar fields (days, months, nth and last
weekdays) against dateutil's rrule, in random zones over a century (zoneinfo).

The libraries say which wall-clock times match; where they differ from each other on clock
changes, tickq's documented rule is the reference, applied here with zoneinfo: a wall-clock time
(an `at` time, a cron string whose minute and hour are single numbers) in a gap runs one gap
later, an ambiguous one at its second occurrence, and two on one instant run once; any other
cron string runs at every instant whose local time matches (both occurrences of a repeated hour,
none in a skipped one). Seeded, so a failure repeats; bounded, about ten seconds.
"""

from __future__ import annotations

import random
from datetime import UTC, datetime, time, timedelta
from zoneinfo import ZoneInfo

import psycopg
from cronsim import CronSim, CronSimError
from dateutil import rrule

# Zones with daylight saving of every kind (an hour, half an hour in Lord Howe, at midnight in
# Havana, the southern hemisphere, Dublin's negative saving) and some without; none whose rules
# changed so lately that PostgreSQL's zone data and Python's could disagree.
ZONES = ["UTC", "Europe/London", "Europe/Paris", "Europe/Dublin", "America/New_York",
         "America/Chicago", "America/Los_Angeles", "America/Havana", "Australia/Sydney",
         "Australia/Lord_Howe", "Pacific/Auckland", "Asia/Tokyo", "Asia/Kolkata", "Europe/Berlin",
         "America/Denver", "Australia/Adelaide"]
DAYS = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
SLOTS = 12
WALK = """
    WITH RECURSIVE s AS (
        SELECT (NULL, NULL, %(at)s::time[], %(on)s::smallint[], %(days)s::smallint[],
            %(months)s::smallint[], %(cron)s, %(zone)s)::tickq.schedule AS schedule
    ), walk (n, slot) AS (
        SELECT 1, tickq.next_slot(s.schedule, %(start)s) FROM s
        UNION ALL
        SELECT w.n + 1, tickq.next_slot(s.schedule, w.slot)
        FROM walk AS w CROSS JOIN s WHERE w.n < %(count)s AND w.slot IS NOT NULL
    )
    SELECT slot FROM walk ORDER BY n
"""


def _field(rng: random.Random, low: int, high: int, names: list[str] | None = None) -> str:
    def value(n: int) -> str:
        return names[n - low] if names and rng.random() < 0.4 else str(n)

    a, b = sorted(rng.sample(range(low, high + 1), 2))
    return rng.choice([
        "*", "*", f"*/{rng.randint(2, max(2, (high - low) // 2))}", value(a),
        f"{value(a)},{value(b)}", f"{value(a)}-{value(b)}", f"{a}-{b}/{rng.randint(2, 4)}",
    ])


def _cron(rng: random.Random) -> str:
    if rng.random() < 0.1:
        return rng.choice(["@hourly", "@daily", "@weekly", "@monthly", "@yearly", "@annually"])
    minute = rng.choice([str(rng.randint(0, 59)), _field(rng, 0, 59)])
    hour = rng.choice([str(rng.randint(0, 23)), str(rng.randint(0, 3)), _field(rng, 0, 23)])
    dom = rng.choice(["*", "*", _field(rng, 1, 28), str(rng.choice([29, 30, 31]))])
    month = rng.choice(["*", "*", _field(rng, 1, 12, MONTHS)])
    dow = rng.choice(["*", "*", _field(rng, 0, 6, ["sun", *DAYS[:6]]), "7", "mon-fri"])
    return f"{minute} {hour} {dom} {month} {dow}"


AT_FORMS = {"@hourly": "0 * * * *", "@daily": "0 0 * * *", "@weekly": "0 0 * * 0",
            "@monthly": "0 0 1 * *", "@yearly": "0 0 1 1 *", "@annually": "0 0 1 1 *"}


def _instants(local: datetime, zone: ZoneInfo, wall: bool) -> list[datetime]:
    """The instants tickq's rule gives one matching wall-clock time."""
    first, second = (local.replace(tzinfo=zone, fold=f).astimezone(UTC) for f in (0, 1))
    real = sorted(i for i in {first, second} if i.astimezone(zone).replace(tzinfo=None) == local)
    if not wall:
        return real
    # zoneinfo reads a time in a gap with the offset before it (fold=0): one gap later; an
    # ambiguous one at its second occurrence is fold=1.
    return [second] if real else [first]


def _expected(walls, zone: ZoneInfo, wall: bool, start: datetime) -> list[datetime]:
    found: set[datetime] = set()
    for local in walls:
        found.update(i for i in _instants(local, zone, wall) if i > start)
        if len(found) >= SLOTS + 4:
            break
    return sorted(found)[:SLOTS]


def _tickq(conn: psycopg.Connection, **args) -> list[datetime]:
    rows = conn.execute(WALK, {"at": None, "on": None, "days": None, "months": None,
                               "cron": None, "count": SLOTS, **args}).fetchall()
    return [r[0].astimezone(UTC) for r in rows if r[0] is not None]


def _start(rng: random.Random, zone: str) -> datetime:
    """Any minute of 1980-2090, or (half the time) one of the two days before a clock change of
    the zone, where the rules differ."""
    start = datetime(1980, 1, 1, tzinfo=UTC) + timedelta(minutes=rng.randint(0, 110 * 525600))
    if rng.random() < 0.5:
        tz = ZoneInfo(zone)
        days = [start + timedelta(days=d) for d in range(366)]
        changes = [b for a, b in zip(days, days[1:], strict=False)
                   if a.astimezone(tz).utcoffset() != b.astimezone(tz).utcoffset()]
        if changes:
            start = rng.choice(changes) - timedelta(minutes=rng.randint(0, 3 * 1440))
    return start


def test_cron_strings_match_cronsim_slot_for_slot(conn: psycopg.Connection) -> None:
    rng = random.Random(22)
    for case in range(120):
        expression, zone_name = _cron(rng), rng.choice(ZONES)
        start = _start(rng, zone_name)
        fields = AT_FORMS.get(expression, expression).split()
        wall = fields[0].isdigit() and fields[1].isdigit()
        zone = ZoneInfo(zone_name)
        local_start = start.astimezone(zone).replace(tzinfo=None) - timedelta(days=1)
        try:
            expected = _expected(CronSim(" ".join(fields), local_start), zone, wall, start)
        except CronSimError:  # a date that never comes (the 30th of February)
            expected = []
        got = _tickq(conn, cron=expression, zone=zone_name, start=start)
        assert got == expected, (case, expression, zone_name, start)


def _calendar(rng: random.Random) -> dict:
    at = sorted(rng.sample([time(h, m) for h in (0, 1, 2, 3, 6, 12, 23) for m in (0, 30, 59)],
                           rng.randint(1, 3)))
    on = rng.sample(range(1, 8), rng.randint(1, 3)) if rng.random() < 0.3 else []
    nth = [rng.choice([10 * n + d, 90 + d]) for n, d in
           [(rng.randint(1, 5), rng.randint(1, 7)) for _ in range(rng.randint(1, 2))]] \
        if rng.random() < 0.4 else []
    # days beside nth weekdays only now and then: together they match a few days a decade
    days = rng.sample([*range(1, 32), *range(-31, 0)], rng.randint(1, 3)) \
        if rng.random() < (0.15 if nth else 0.5) else []
    months = rng.sample(range(1, 13), rng.randint(1, 4)) if rng.random() < 0.4 else []
    return {"at": at, "on": sorted({*on, *nth}) or None, "days": sorted(set(days)) or None,
            "months": sorted(months) or None}


def _rule(cal: dict, local_start: datetime) -> rrule.rruleset:
    """The calendar's dates; plain and nth weekdays as two rules, since one rrule mixing them
    finds nothing (dateutil 2.9)."""
    weekdays = [rrule.weekday(d % 10 - 1, None if d <= 7 else -1 if d > 90 else d // 10)
                for d in cal["on"] or []]
    groups = [g for g in ([w for w in weekdays if w.n is None], [w for w in weekdays if w.n])
              if g] or [None]
    dates = rrule.rruleset()
    for group in groups:
        dates.rrule(rrule.rrule(
            rrule.MONTHLY if group or cal["days"] else rrule.DAILY,
            dtstart=local_start.replace(hour=0, minute=0), byweekday=group,
            bymonthday=cal["days"], bymonth=cal["months"], byhour=0, byminute=0, bysecond=0,
            until=local_start + timedelta(days=400 * 366)))
    return dates


def test_calendar_fields_match_rrule_slot_for_slot(conn: psycopg.Connection) -> None:
    rng = random.Random(15)
    checked = 0
    for case in range(90):
        cal, zone_name = _calendar(rng), rng.choice(ZONES)
        start = _start(rng, zone_name)
        zone = ZoneInfo(zone_name)
        local_start = start.astimezone(zone).replace(tzinfo=None) - timedelta(days=1)
        dates = _rule(cal, local_start)
        # A date rrule can never reach (the 31st of February) has no slot in either.
        first = dates.after(local_start, inc=True) if local_start.year < 2150 else None
        got = _tickq(conn, at=cal["at"], on=cal["on"], days=cal["days"], months=cal["months"],
                     zone=zone_name, start=start)
        if first is None or first.year > local_start.year + 56:
            assert got == [], (case, cal)
            continue
        walls = (datetime.combine(d.date(), t) for d in dates for t in cal["at"])
        expected = _expected(walls, zone, True, start)
        assert got == expected, (case, cal, zone_name, start)
        checked += 1
    assert checked > 65
