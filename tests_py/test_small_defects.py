"""Small defects users met: the line a command prints where a careful reader expects more (or
less). Real subprocesses of `tickq` and a real PostgreSQL."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import psycopg
from test_agents import write_registry
from test_cli import NOWHERE, registry_file, tickq

REPO = Path(__file__).resolve().parent.parent
MODEL = "http://127.0.0.1:9/v1"  # never called: these tests run no agent


def agent_cmd(folder: Path, db_url: str, *args: str):
    return tickq("agent", *args, "--registry", str(folder / "registry.toml"),
                 "--database-url", db_url)


# ---------------------------------------------------------------- agent show / edit


def test_agent_show_of_a_typo_names_the_agent_meant(tmp_path: Path, db_url: str) -> None:
    write_registry(tmp_path, MODEL)
    assert agent_cmd(tmp_path, db_url, "add", "morning-brief", "--prompt", "x",
                     "--every", "1h").returncode == 0

    shown = agent_cmd(tmp_path, db_url, "show", "morning-breif")

    assert shown.returncode == 1, shown.stderr
    assert shown.stderr.count("\n") == 1, shown.stderr
    assert 'did you mean "morning-brief"?' in shown.stderr, shown.stderr


def test_agent_edit_accepts_max_turns_or_explains_its_own_options(
    tmp_path: Path, db_url: str
) -> None:
    write_registry(tmp_path, MODEL)
    assert agent_cmd(tmp_path, db_url, "add", "brief", "--prompt", "x",
                     "--every", "1h").returncode == 0

    # --max-turns is the registry's word (agents.max_turns): the same option as --turns.
    edited = agent_cmd(tmp_path, db_url, "edit", "brief", "--max-turns", "3")
    assert edited.returncode == 0, edited.stderr
    assert re.search(r"^turns\s+3$", edited.stdout, re.M), edited.stdout
    too_many = agent_cmd(tmp_path, db_url, "edit", "brief", "--max-turns", "10")
    assert too_many.returncode == 2
    assert "from 1 to 6, got 10" in too_many.stderr, too_many.stderr

    # An option it does not know: the usage of `agent edit`, not of `tickq`, and the nearest.
    wrong = agent_cmd(tmp_path, db_url, "edit", "brief", "--turn-limit", "3")
    assert wrong.returncode == 2
    assert "usage: tickq agent edit" in wrong.stderr, wrong.stderr
    assert "--turn-limit" in wrong.stderr and "did you mean --turns?" in wrong.stderr


def test_agent_show_in_utc_prints_each_time_once(tmp_path: Path, db_url: str) -> None:
    write_registry(tmp_path, MODEL)  # no settings.timezone: UTC
    added = agent_cmd(tmp_path, db_url, "add", "brief", "--prompt", "x", "--every", "1h")
    assert added.returncode == 0, added.stderr

    assert "(UTC / UTC)" not in added.stdout, added.stdout
    runs = re.findall(r"^  \w{3} \d{4}-\d\d-\d\d \d\d:\d\d UTC(.*)$", added.stdout, re.M)
    assert len(runs) == 5, added.stdout
    assert all(rest == "" for rest in runs), added.stdout


def test_agent_show_in_another_zone_still_prints_both(tmp_path: Path, db_url: str) -> None:
    write_registry(tmp_path, MODEL)
    added = agent_cmd(tmp_path, db_url, "add", "brief", "--prompt", "x", "--at", "07:30",
                      "--timezone", "America/Chicago")
    assert added.returncode == 0, added.stderr

    assert "next runs (America/Chicago / UTC):" in added.stdout, added.stdout
    assert len(re.findall(r"07:30 America/Chicago   \w{3} \S+ \d\d:30 UTC$", added.stdout,
                          re.M)) == 5


# ---------------------------------------------------------------- history


def test_history_shows_no_slot_count_for_a_retry(tmp_path: Path, db_url: str) -> None:
    path = registry_file(tmp_path, """\
        [settings]
        retry_base = "1s"

        [kinds.flaky]
        command = ["false"]
        every = "1h"
        timeout = "30s"
        retries = 1
        """)
    ran = tickq("run", "flaky", "--registry", str(path), "--database-url", db_url)
    assert ran.returncode == 1, ran.stderr
    with psycopg.connect(db_url) as conn:  # until the retry falls due (a tick sooner claims none)
        conn.execute("SELECT pg_sleep(greatest(0, extract(EPOCH FROM k.due_at"
                     " - clock_timestamp()))) FROM tickq.job_kind AS k WHERE k.name = 'flaky'")
    ticked = tickq("tick", "--registry", str(path), "--database-url", db_url)
    assert ticked.returncode == 0, ticked.stderr

    history = tickq("history", "flaky", "--registry", str(path), "--database-url", db_url)

    assert history.returncode == 0, history.stderr
    rows = {m[0]: m[1] for m in re.findall(r"^\d+\s+(\w+)\s+\d+\s+.*\s(\S+)$", history.stdout,
                                           re.M)}
    assert rows.get("retry") == "-", history.stdout
    assert "manual" in rows, history.stdout


# ---------------------------------------------------------------- the registry file


def test_an_unquoted_duration_says_what_to_write(tmp_path: Path) -> None:
    path = registry_file(tmp_path, """\
        [kinds.a]
        command = ["true"]
        every = 5m
        timeout = "30s"
        """)

    result = tickq("tick", "--registry", str(path), "--database-url", NOWHERE)

    assert result.returncode == 2, result.stderr
    assert "invalid TOML" in result.stderr
    assert 'every = "5m"' in result.stderr, result.stderr


def test_an_unknown_key_names_the_nearest_not_the_whole_list(tmp_path: Path) -> None:
    path = registry_file(tmp_path, """\
        [kinds.a]
        command = ["true"]
        every = "5m"
        timout = "30s"
        """)

    result = tickq("tick", "--registry", str(path), "--database-url", NOWHERE)

    assert result.returncode == 2, result.stderr
    line = next(ln for ln in result.stderr.splitlines() if '"timout"' in ln)
    assert 'did you mean "timeout"?' in line, line
    assert "irreversible" not in line, line  # not the list of every key


def test_an_unknown_key_far_from_any_still_lists_them(tmp_path: Path) -> None:
    path = registry_file(tmp_path, """\
        [kinds.a]
        command = ["true"]
        every = "5m"
        timeout = "30s"
        colour = "red"
        """)

    result = tickq("tick", "--registry", str(path), "--database-url", NOWHERE)

    line = next(ln for ln in result.stderr.splitlines() if '"colour"' in ln)
    assert "unknown key" in line and "irreversible" in line, line


def test_a_zone_typo_names_the_nearest_zone(tmp_path: Path, db_url: str) -> None:
    path = registry_file(tmp_path, """\
        [settings]
        timezone = "Europe/Berln"

        [kinds.a]
        command = ["true"]
        at = "06:00"
        timeout = "30s"
        timezone = "America/New_Yrok"

        [kinds.b]
        command = ["true"]
        at = "06:00"
        timeout = "30s"
        timezone = "Mars/Olympus"
        """)

    result = tickq("check", "--registry", str(path), "--database-url", db_url)

    assert result.returncode == 2, result.stderr
    lines = result.stderr.splitlines()
    assert any('"settings.timezone": unknown time zone "Europe/Berln"; did you mean '
               '"Europe/Berlin"?' in ln for ln in lines), result.stderr
    assert any('kind "a", key "timezone": unknown time zone "America/New_Yrok"; did you mean '
               '"America/New_York"?' in ln for ln in lines), result.stderr
    # Nothing near: how a zone is spelled, as before.
    assert any('kind "b", key "timezone": unknown time zone "Mars/Olympus" (use an IANA name'
               in ln for ln in lines), result.stderr


# ---------------------------------------------------------------- sync


def test_a_first_sync_says_what_it_added(tmp_path: Path, db_url: str) -> None:
    path = registry_file(tmp_path, """\
        [kinds.backup]
        command = ["true"]
        every = "1h"
        timeout = "30s"

        [kinds.report]
        command = ["true"]
        every = "1d"
        timeout = "30s"
        """)

    first = tickq("sync", "--registry", str(path), "--database-url", db_url)
    assert first.returncode == 0, first.stderr
    assert "added 2 kinds to the queue: backup, report" in first.stdout, first.stdout
    assert "no drift" not in first.stdout, first.stdout

    again = tickq("sync", "--registry", str(path), "--database-url", db_url)
    assert again.returncode == 0, again.stderr
    assert again.stdout.strip() == "no drift: the queue matches the registry", again.stdout


def test_a_changed_command_of_an_irreversible_kind_is_a_registry_edit(
    tmp_path: Path, db_url: str
) -> None:
    text = """\
        [kinds.payout]
        command = ["bin/payout", "--live"]
        every = "1h"
        timeout = "30s"
        irreversible = true
        """
    path = registry_file(tmp_path, text)
    assert tickq("sync", "--registry", str(path), "--database-url", db_url).returncode == 0

    registry_file(tmp_path, text.replace('"--live"', '"--live", "--batch"'))
    edited = tickq("sync", "--registry", str(path), "--database-url", db_url)

    assert edited.returncode == 0, edited.stderr
    line = next(ln for ln in edited.stdout.splitlines() if "field=command" in ln)
    assert " INFO registry.drift " in line and "registry_edit=true" in line, edited.stdout

    # Behind the registry's back (the mirror edited in psql): still a warning.
    with psycopg.connect(db_url, autocommit=True) as conn:
        conn.execute("""UPDATE tickq.job_kind SET registry = jsonb_set(registry, '{command}',
                        '["bin/other"]') WHERE name = 'payout'""")
    tampered = tickq("sync", "--registry", str(path), "--database-url", db_url)
    line = next(ln for ln in tampered.stdout.splitlines() if "field=command" in ln)
    assert " WARNING registry.drift " in line and "registry_edit=false" in line, tampered.stdout


# ---------------------------------------------------------------- status


def test_status_names_the_outcome_of_a_streak_an_interruption_ended(
    tmp_path: Path, db_url: str
) -> None:
    path = registry_file(tmp_path, """\
        [kinds.slow]
        command = ["sleep", "30"]
        every = "1h"
        timeout = "1s"
        """)
    where = ("--registry", str(path), "--database-url", db_url)
    for _ in range(3):
        assert "slow: timeout" in tickq("run", "slow", *where).stderr
    # A person stops the fourth run (Ctrl-C): interrupted, not the command's fault.
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "TICKQ_REGISTRY")}
    env["PYTHONPATH"] = str(REPO / "python_runner")
    run = subprocess.Popen([sys.executable, "-m", "tickq.cli", "run", "slow", *where,
                            "--log-format", "json"], env=env, stderr=subprocess.PIPE, text=True)
    assert run.stderr is not None
    for line in run.stderr:
        if '"run.claimed"' in line:
            break
    run.send_signal(signal.SIGINT)
    rest = run.stderr.read()
    assert run.wait(30) == 128 + signal.SIGINT, rest
    assert "slow: interrupted" in rest, rest

    status = tickq("status", *where)

    assert status.returncode == 0, status.stderr
    row = next(ln for ln in status.stdout.splitlines() if ln.startswith("slow "))
    assert "interrupted after timeout x3" in row, status.stdout


def test_a_due_time_of_infinity_is_shown_as_never_not_a_traceback(
    tmp_path: Path, db_url: str
) -> None:
    """An operator parks a kind with `UPDATE tickq.job_kind SET due_at = 'infinity'`: status,
    explain and upcoming still answer (in a zone east of UTC too, where converting the latest
    datetime would overflow)."""
    registry = registry_file(tmp_path, """\
        [settings]
        timezone = "Europe/Berlin"

        [kinds.parked]
        command = ["true"]
        every = "5m"
        timeout = "30s"
        """)
    assert tickq("sync", "--registry", str(registry), "--database-url", db_url).returncode == 0
    with psycopg.connect(db_url, autocommit=True) as conn:
        conn.execute("UPDATE tickq.job_kind SET due_at = 'infinity' WHERE name = 'parked'")
    for args in (["status"], ["explain", "parked"], ["upcoming"], ["history", "parked"]):
        done = tickq(*args, "--registry", str(registry), "--database-url", db_url)
        assert done.returncode in (0, 1) and "Traceback" not in done.stderr, (args, done)
    status = tickq("status", "--registry", str(registry), "--database-url", db_url)
    [row] = [ln for ln in status.stdout.splitlines() if ln.startswith("parked")]
    assert "never" in row, status.stdout
