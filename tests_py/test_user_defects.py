"""Defects users met (issue 20): one line and exit 2 where the README promises it, and a status
table that `grep` can read. Real subprocesses and a real PostgreSQL."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from test_cli import registry_file, tickq

REPO = Path(__file__).resolve().parent.parent


def _one_line(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr, result.stderr
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, result.stderr
    return lines[0]


# ---------------------------------------------------------------- serve --port


@pytest.mark.parametrize("port", ["99999", "-1", "65536"])
def test_serve_refuses_a_port_out_of_range_in_one_line(db_url: str, port: str) -> None:
    result = tickq("serve", "--port", port, "--database-url", db_url, timeout=30)

    line = _one_line(result)
    assert "0" in line and "65535" in line and port in line, line


# ---------------------------------------------------------------- report --html


def test_report_into_a_folder_is_one_line(db_url: str, tmp_path: Path) -> None:
    line = _one_line(tickq("report", "--html", str(tmp_path), "--database-url", db_url))

    assert str(tmp_path) in line and "folder" in line, line


def test_report_where_it_cannot_write_is_one_line(db_url: str) -> None:
    line = _one_line(tickq("report", "--html", "/proc/x.html", "--database-url", db_url))

    assert "/proc" in line, line


def test_report_into_a_missing_folder_is_refused_not_created(
    db_url: str, tmp_path: Path
) -> None:
    target = tmp_path / "nonexistent" / "dir" / "x.html"

    line = _one_line(tickq("report", "--html", str(target), "--database-url", db_url))

    assert str(target.parent) in line and "no such folder" in line, line
    assert not (tmp_path / "nonexistent").exists()


def test_report_into_an_existing_folder_still_writes(db_url: str, tmp_path: Path) -> None:
    target = tmp_path / "page.html"
    result = tickq("report", "--html", str(target), "--database-url", db_url)

    assert result.returncode == 0, result.stderr
    assert target.read_text().startswith("<!DOCTYPE html>") or "<html" in target.read_text()


# ---------------------------------------------------------------- status | grep

LONG = "nightly-warehouse-reconciliation-of-every-regional-ledger"


def _status(db_url: str, columns: str | None) -> str:
    env = {k: v for k, v in os.environ.items()
           if k not in ("DATABASE_URL", "TICKQ_REGISTRY", "TICKQ_LOG_FORMAT", "COLUMNS")}
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(REPO / "python_runner"), os.environ.get("PYTHONPATH")) if p)
    if columns is not None:
        env["COLUMNS"] = columns
    result = subprocess.run(
        [sys.executable, "-m", "tickq.cli", "status", "--database-url", db_url],
        env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_status_through_a_pipe_keeps_whole_names(db_url: str, tmp_path: Path) -> None:
    path = registry_file(tmp_path, f"""\
        [kinds.{LONG}]
        command = ["true"]
        every = "1h"
        timeout = "30s"
        """)
    synced = tickq("sync", "--registry", str(path), "--database-url", db_url)
    assert synced.returncode == 0, synced.stderr

    piped = _status(db_url, None)
    assert [ln for ln in piped.splitlines() if LONG in ln], piped

    # COLUMNS, when set, is the width to fit: the name is cut to make the row fit.
    narrow = _status(db_url, "60")
    table = narrow.split("\n-", 1)[-1]
    assert LONG not in narrow, narrow
    assert all(len(ln) <= 60 for ln in table.splitlines()), narrow
    assert "…" in narrow


# ---------------------------------------------------------------- legacy zone names


def test_a_legacy_zone_name_is_refused_with_the_name_to_use(db_url: str, tmp_path: Path) -> None:
    path = registry_file(tmp_path, """\
        [settings]
        timezone = "EST"

        [kinds.report]
        command = ["true"]
        at = "06:00"
        timezone = "PST8PDT"
        timeout = "30s"
        """)

    result = tickq("tick", "--registry", str(path), "--database-url", db_url)

    assert result.returncode == 2, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    lines = result.stderr.splitlines()
    settings = [ln for ln in lines if "timezone" in ln and "EST" in ln]
    kind = [ln for ln in lines if "report" in ln and "PST8PDT" in ln]
    assert settings and "America/New_York" in settings[0], result.stderr
    assert kind and "America/Los_Angeles" in kind[0], result.stderr


# ---------------------------------------------------------------- small ones


@pytest.mark.parametrize("seconds", ["0", "-1", "nan"])
def test_status_watch_refuses_a_period_that_is_not_positive(db_url: str, seconds: str) -> None:
    result = tickq("status", "--watch", seconds, "--database-url", db_url, timeout=20)

    line = _one_line(result)
    assert "--watch" in line and seconds in line, line


def test_simulate_names_its_upper_bound(db_url: str, tmp_path: Path) -> None:
    path = registry_file(tmp_path, """\
        [kinds.a]
        command = ["true"]
        every = "1h"
        timeout = "30s"
        """)
    result = tickq("simulate", "--hours", "100000", "--registry", str(path),
                   "--database-url", db_url)

    line = _one_line(result)
    assert "8784" in line and "100000" in line, line


def test_pause_until_confirms_in_the_registrys_zone(db_url: str, tmp_path: Path) -> None:
    path = registry_file(tmp_path, """\
        [settings]
        timezone = "Asia/Tokyo"

        [kinds.a]
        command = ["true"]
        every = "1h"
        timeout = "30s"
        """)
    assert tickq("sync", "--registry", str(path), "--database-url", db_url).returncode == 0

    result = tickq("pause", "a", "--until", "23:00", "--database-url", db_url)

    assert result.returncode == 0, result.stderr
    out = result.stdout.strip()
    assert out.startswith("paused a until "), out
    assert " 23:00 Asia/Tokyo" in out, out
    assert "+00:00" not in out and ".0" not in out, out
