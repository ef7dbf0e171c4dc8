"""`tickq check` at month ends: the worst case holds a month end of a 28-, 29-, 30- and 31-day
month, so a pile-up of month-end kinds is found and named, and --suggest spreads their times
(each proposal simulated before it is printed; the proposal, written back, passes)."""

from __future__ import annotations

import dataclasses
import datetime as dt
import re
from decimal import Decimal
from pathlib import Path

from test_cli import registry_file, tickq


def month_end_kinds(n: int) -> str:
    return "".join(f'\n[kinds.close_{i:02d}]\ncommand = ["true"]\nat = "00:00"\ndays = [-1]\n'
                   'timeout = "10m"\n' for i in range(n))


def test_a_month_end_pile_up_is_found_named_and_spread_by_suggest(
    tmp_path: Path, db_url: str
) -> None:
    text = '[settings]\nslots = 2\nstale_after = "15m"\n' + month_end_kinds(12)
    path = registry_file(tmp_path, text)
    result = tickq("check", "--suggest", "--registry", str(path), "--database-url", db_url,
                   timeout=600)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "worst case STARVES" in result.stdout, result.stdout
    assert re.search(r"close_\d\d \(normal\) waits .*, at the month end of \w+ \d{4} \(\d\d days\)",
                     result.stdout), result.stdout
    for days in (28, 29, 30, 31):  # each held by a window of its own or by the month from today
        assert f"({days} days)" in result.stdout or f"a {days}-day month" in result.stdout
    proposed = dict(re.findall(r'\[kinds\.(close_\d\d)\]\nat = \["(\d\d:\d\d)"\]', result.stdout))
    assert len(proposed) >= 8, result.stdout  # two slots: at most a few stay at 00:00
    assert len(set(proposed.values())) == len(proposed), proposed

    for name, at in proposed.items():
        text = text.replace(f'[kinds.{name}]\ncommand = ["true"]\nat = "00:00"',
                            f'[kinds.{name}]\ncommand = ["true"]\nat = "{at}"')
    path.write_text(text)
    spread = tickq("check", "--registry", str(path), "--database-url", db_url, timeout=600)
    assert spread.returncode == 0, spread.stdout + spread.stderr


def test_kinds_that_meet_only_in_february_are_found_in_a_28_day_month(
    tmp_path: Path, db_url: str
) -> None:
    """The last day and the 28th are one day only in a February of 28 days: the month from
    today alone would never run them together."""
    path = registry_file(tmp_path, """\
        [settings]
        slots = 1
        stale_after = "15m"

        [kinds.last_day]
        command = ["true"]
        at = "00:00"
        days = [-1]
        timeout = "20m"

        [kinds.the_28th]
        command = ["true"]
        at = "00:00"
        days = [28]
        timeout = "20m"
        """)
    result = tickq("check", "--registry", str(path), "--database-url", db_url, timeout=600)
    assert result.returncode == 1, result.stdout + result.stderr
    starved = [line.strip() for line in result.stdout.splitlines() if " waits " in line]
    [line] = [s for s in starved if s.startswith(("the_28th", "last_day"))]
    assert "at the month end of February" in line and "(28 days)" in line, result.stdout


def test_a_worst_wait_on_a_month_s_last_or_first_day_is_named_outside_a_month_end_window() -> None:
    """The day is the database's (KindWait.month_end, tickq.month_end_at in the kind's zone);
    a month-end window's own month end comes first."""
    from tickq.cli.check import month_end
    from tickq.db.api.check import KindWait, Window

    week = Window(dt.datetime(2027, 4, 26, tzinfo=dt.UTC), Decimal(168), dt.timedelta(days=7),
                  dt.timedelta(hours=1), None)
    wait = KindWait("close", "normal", 3, dt.timedelta(hours=1), True,
                    dt.datetime(2027, 5, 1, 2, 30, tzinfo=dt.UTC), [], 1, dt.date(2027, 4, 30))
    assert month_end(wait, [week]) == ", at the month end of April 2027 (30 days)"
    assert month_end(dataclasses.replace(wait, month_end=None), [week]) == ""
    february = dataclasses.replace(week, month_end=dt.date(2027, 2, 28))
    assert month_end(wait, [february]) == ", at the month end of February 2027 (28 days)"


def test_the_month_end_is_judged_in_the_zone_the_kind_s_slots_are_read_in(
    tmp_path: Path, pg_server_url: str
) -> None:
    """A calendar kind's own zone; an `every` kind (whose cadence knows no zone) the
    registry's: at 12:00 UTC on April 29th it is already April 30th in Kiritimati (UTC+14)."""
    from tickq.db.api import check as api
    from tickq.registry import load_registry

    path = registry_file(tmp_path, """\
        [settings]
        timezone = "Pacific/Kiritimati"

        [kinds.hourly]
        command = ["true"]
        every = "1h"
        timeout = "1m"

        [kinds.daily_utc]
        command = ["true"]
        at = "09:00"
        timezone = "UTC"
        timeout = "1m"

        [kinds.daily_local]
        command = ["true"]
        at = "09:00"
        timeout = "1m"
        """)
    worst = [{"kind": kind, "lane": "normal", "runs": 1, "longest_wait": "00:30:00",
              "starved": True, "worst_due_at": "2027-04-29T12:00:00Z", "behind": [],
              "in_window": 1} for kind in ("hourly", "daily_utc", "daily_local")]
    with api.scratch(pg_server_url) as conn:
        api.load(conn, load_registry(path))
        found = {k.kind: k.month_end for k in api.worst_waits(conn, worst)}
    assert found == {"hourly": dt.date(2027, 4, 30), "daily_utc": None,
                     "daily_local": dt.date(2027, 4, 30)}
