"""`tickq check` catches bursts, not only averages: the worst case is simulated, offsets spread
cadences, and `--suggest` proposes a fix that the same simulation passes.

examples/starvation/burst.toml: eight hourly kinds in three slots. Their slot share fits the
budget, but all of them are due at :00, so the last ones wait half an hour.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
STORY = REPO / "examples" / "starvation"


def tickq(*args: str, url: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tickq.cli", *args, "--database-url", url],
        capture_output=True, text=True, check=False, timeout=120,
    )


def test_check_fails_the_burst_that_fits_on_average(db_url: str) -> None:
    done = tickq("check", "--registry", str(STORY / "burst.toml"), url=db_url)
    # the average fits...
    assert "capacity fits: total slot share 2.07 against 2.25" in done.stdout, done.stdout
    # ...but the queue starves at :00, and the check says so
    assert done.returncode == 1, done.stdout + done.stderr
    assert "worst case STARVES 3 kind(s)" in done.stdout
    lines = {line.split()[0]: line for line in done.stdout.splitlines()
             if "longer than stale_after 15m" in line}
    assert sorted(lines) == ["hourly_6", "hourly_7", "tickq.housekeeping"], done.stdout
    # the worst wait, the instant it began (an aligned hour) and what held the slots meanwhile
    assert "waits 30m" in lines["hourly_7"] and ":00 UTC" in lines["hourly_7"]
    assert "behind hourly_0, hourly_1, hourly_2, hourly_3, hourly_4, hourly_5" in lines["hourly_7"]
    # which window was covered
    assert "every schedule once (1h)" in done.stdout


@pytest.mark.parametrize("hours", ["0", "-3"])
def test_simulate_refuses_a_window_that_is_not_positive(hours: str, db_url: str) -> None:
    done = tickq("simulate", "--registry", str(STORY / "burst.toml"), f"--hours={hours}",
                 url=db_url)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"tickq: --hours must be more than 0 and less than 8784 (366 days), got {hours}"]


def test_simulate_defaults_to_a_window_that_covers_every_schedule(
    tmp_path: Path, db_url: str
) -> None:
    import datetime as dt

    # a daily kind half a day away is not due in a window of one hour and a quarter
    later = (dt.datetime.now(dt.UTC) + dt.timedelta(hours=12)).strftime("%H:%M")
    path = tmp_path / "registry.toml"
    path.write_text(f"""
[settings]
housekeeping_every = "1h"
[kinds.hourly]
command = ["true"]
every = "1h"
timeout = "1m"
[kinds.later]
command = ["true"]
at = "{later}"
timeout = "1m"
""")
    done = tickq("simulate", "--registry", str(path), "--hours", "1.25", url=db_url)
    assert done.returncode == 0, done.stdout + done.stderr
    row = next(line for line in done.stdout.splitlines() if line.startswith("later "))
    assert "not due in window" in row
    # without --hours: a day (the daily kind's period) and stale_after
    done = tickq("simulate", "--registry", str(path), url=db_url)
    assert "(every schedule once: 1d)" in done.stdout.splitlines()[0], done.stdout
    assert "24.25 simulated hours" in done.stdout


# ---------------------------------------------------------------- offsets


def _kind(extra: str, schedule: str = 'every = "1h"') -> str:
    return f'[kinds.a]\ncommand = ["true"]\n{schedule}\ntimeout = "1m"\n{extra}\n'


@pytest.mark.parametrize(("extra", "schedule", "problem"), [
    ('offset = "1h"', 'every = "1h"', 'key "offset": must be shorter than every (1h), got 1h'),
    ('offset = "90m"', 'every = "1h"', 'key "offset": must be shorter than every'),
    ('offset = "5m"', 'at = "06:00"', 'key "offset": only an every cadence takes this key'),
    ('offset = 300', 'every = "1h"', 'key "offset": duration must be a string'),
])
def test_an_offset_outside_its_cadence_is_refused(
    extra: str, schedule: str, problem: str, tmp_path: Path, db_url: str
) -> None:
    path = tmp_path / "registry.toml"
    path.write_text(_kind(extra, schedule))
    done = tickq("check", "--registry", str(path), url=db_url)
    assert done.returncode == 2, done.stdout + done.stderr
    assert problem in done.stderr


def test_an_offset_shifts_the_slots_and_shows_in_status(tmp_path: Path, db_url: str) -> None:
    import json

    import psycopg

    path = tmp_path / "registry.toml"
    path.write_text(_kind('offset = "20m"') + _kind('offset = "0s"').replace("kinds.a", "kinds.b"))
    assert tickq("sync", "--registry", str(path), url=db_url).returncode == 0
    status = json.loads(tickq("status", "--json", url=db_url).stdout)
    schedules = {k["kind"]: k["schedule"] for k in status["kinds"]}
    assert schedules["a"] == "every 1h offset 20m" and schedules["b"] == "every 1h"
    with psycopg.connect(db_url, autocommit=True) as conn:
        # after a run at 10:07 the kind is next due at 10:20, not 11:00
        conn.execute("UPDATE tickq.job_kind SET due_at = '2026-06-01 10:00Z' WHERE name = 'a'")
        run_id = conn.execute(
            "SELECT run_id FROM tickq.claim_jobs(1, 'd', '2026-06-01 10:07Z')").fetchone()[0]
        conn.execute("SELECT tickq.report_run(%s, 'd', 'ok', 0, NULL, NULL, '2026-06-01 10:08Z')",
                     (run_id,))
        due = conn.execute("SELECT due_at FROM tickq.job_kind WHERE name = 'a'").fetchone()[0]
    assert due.isoformat() == "2026-06-01T10:20:00+00:00"


# ---------------------------------------------------------------- --suggest


def _apply_offsets(text: str, snippet: str) -> str:
    """Set each suggested offset in its kind's table, as a user pasting the snippet would."""

    for kind, value in re.findall(r'\[kinds\.([a-z0-9_.-]+)\]\noffset = "(\w+)"', snippet):
        header = f"[kinds.{kind}]\n"
        assert header in text, kind
        text = text.replace(header, f'{header}offset = "{value}"\n')
    return text


def test_suggest_proposes_offsets_that_pass_the_check(tmp_path: Path, db_url: str) -> None:
    done = tickq("check", "--suggest", "--registry", str(STORY / "burst.toml"), url=db_url)
    assert done.returncode == 1, done.stdout + done.stderr
    snippet = done.stdout.split("suggested fixes (each checked by the same worst-case")[1]
    assert "spread the cadences with offsets" in snippet
    fixed = tmp_path / "registry.toml"
    fixed.write_text(_apply_offsets((STORY / "burst.toml").read_text(), snippet))
    assert fixed.read_text() != (STORY / "burst.toml").read_text()
    again = tickq("check", "--registry", str(fixed), url=db_url)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "worst case fits" in again.stdout
    # Offsets are not the only fix: a user whose times are fixed by the business is offered the
    # fewest slots that pass too (issue 42: a migrated crontab was offered odd times, never slots).
    slots = re.search(r"- more slots; set:\n\n\[settings\]\nslots = (\d+)", snippet)
    assert slots and int(slots.group(1)) > 3, snippet
    more = tmp_path / "slots.toml"
    more.write_text((STORY / "burst.toml").read_text().replace(
        "slots = 3", f"slots = {slots.group(1)}", 1))
    passes = tickq("check", "--registry", str(more), url=db_url)
    assert passes.returncode == 0, passes.stdout + passes.stderr


def test_the_fixed_burst_example_passes(db_url: str) -> None:
    done = tickq("check", "--registry", str(STORY / "burst_fixed.toml"), url=db_url)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "every 1h offset 15m" in done.stdout


def test_suggest_counts_slots_when_no_offset_can_help(tmp_path: Path, db_url: str) -> None:

    # six hourly kinds of a quarter of an hour each need an hour and a half of one slot: no
    # offsets spread that over an hour
    path = tmp_path / "registry.toml"
    path.write_text('[settings]\nslots = 1\nhousekeeping_every = "1h"\n' + "".join(
        f'[kinds.k{i}]\ncommand = ["true"]\nevery = "1h"\ntimeout = "15m"\n' for i in range(6)))
    done = tickq("check", "--suggest", "--registry", str(path), url=db_url)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "worst case STARVES" in done.stdout
    assert "spread the cadences" not in done.stdout, done.stdout  # no offset can help
    slots = re.search(r"- more slots; set:\n\n\[settings\]\nslots = (\d+)", done.stdout)
    assert slots and int(slots.group(1)) > 1, done.stdout
    path.write_text(path.read_text().replace("slots = 1", f"slots = {slots.group(1)}"))
    again = tickq("check", "--registry", str(path), url=db_url)
    assert "worst case fits" in again.stdout, again.stdout


def test_simulate_refuses_an_endless_window(db_url: str) -> None:
    done = tickq("simulate", "--registry", str(STORY / "burst.toml"), "--hours", "inf",
                 url=db_url)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "tickq: --hours must be more than 0 and less than 8784 (366 days), got inf"]


def test_check_observed_durations_use_the_queues_history(db_url: str) -> None:
    import psycopg

    registry = str(STORY / "burst.toml")
    assert tickq("sync", "--registry", registry, url=db_url).returncode == 0
    with psycopg.connect(db_url, autocommit=True) as conn:
        # the hourly kinds are known to take half a minute, not their quarter-hour timeout
        conn.execute("""
            INSERT INTO tickq.job_run (kind, attempt, run_trigger, dispatcher, claimed_at,
                                       finished_at, outcome, duration)
            SELECT k.name, 1, 'schedule', 'd', now() - interval '1 hour',
                   now() - interval '1 hour', 'ok', interval '30 seconds'
            FROM tickq.job_kind AS k, generate_series(1, 6)
            WHERE k.name LIKE 'hourly_%'
        """)
    done = tickq("check", "--registry", registry, "--durations", "observed", url=db_url)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "every run taking its observed p95, else its timeout" in done.stdout
    assert "worst case fits" in done.stdout


def test_suggest_simulates_no_proposal_twice(
    tmp_path: Path, pg_server_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Each simulation of a week is seconds for a starving registry: the check's own worst case
    # is the registry's, and a number of slots the search simulated passes or fails the same
    # the second time. Counted at the one door every proposal goes through (simulate.evaluate,
    # in a real scratch database); the suggestion must be the one the search always gave.
    from tickq.check import simulate, suggest
    from tickq.registry import load_registry

    path = tmp_path / "registry.toml"
    path.write_text('[settings]\nslots = 1\nhousekeeping_every = "1h"\n' + "".join(
        f'[kinds.k{i}]\ncommand = ["true"]\nevery = "1h"\ntimeout = "15m"\n' for i in range(6)))
    registry = load_registry(path)
    simulated: list[str] = []
    evaluate = simulate.evaluate

    def counted(conn, proposal, durations, *args, **kwargs):  # type: ignore[no-untyped-def]
        simulated.append(repr(proposal))
        return evaluate(conn, proposal, durations, *args, **kwargs)

    with simulate.scratch(pg_server_url) as sims:
        checked = simulate.evaluate(sims, registry, None)
        assert checked.starved
        monkeypatch.setattr(simulate, "evaluate", counted)
        found = suggest.suggest(sims, registry, None, checked)
    assert found.slots == 7, found  # all six and housekeeping are due at :00, each a slot
    assert repr(registry) not in simulated  # the check's own worst case was not run again
    assert len(simulated) == len(set(simulated)), simulated
