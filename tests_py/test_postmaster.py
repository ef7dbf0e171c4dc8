"""tickq.db.postmaster, the one reader of postmaster.pid: a live server's lines, and what is
not a running server (no file, a stale one, a broken one). A real server's file is read by
the embedded server's start and `tickq server status` (test_embedded, test_operator)."""

from __future__ import annotations

import os
import subprocess
from datetime import UTC, datetime
from pathlib import Path

from tickq.db import postmaster


def _write(folder: Path, *lines: str) -> Path:
    (folder / "postmaster.pid").write_text("\n".join(lines) + "\n")
    return folder


def test_a_live_server_is_read_line_by_line(tmp_path: Path) -> None:
    # The layout PostgreSQL 15 writes (pid, data, start, port, socket, listen, shmem, status),
    # with this test's own pid: a process that is surely alive.
    _write(tmp_path, str(os.getpid()), str(tmp_path), "1765000000", "5433", "/tmp/sock",
           "", "  5433001    163840", "ready   ")
    server = postmaster.read(tmp_path)
    assert server == postmaster.Postmaster(
        os.getpid(), datetime.fromtimestamp(1765000000, UTC), "5433", "/tmp/sock", "ready")
    assert server.ready


def test_a_server_still_starting_is_running_but_not_ready(tmp_path: Path) -> None:
    _write(tmp_path, str(os.getpid()), str(tmp_path), "1765000000", "5433", "/tmp/sock",
           "", "0 0", "starting")
    server = postmaster.read(tmp_path)
    assert server is not None and not server.ready


def test_a_short_file_says_what_it_has(tmp_path: Path) -> None:
    server = postmaster.read(_write(tmp_path, str(os.getpid()), str(tmp_path)))
    assert server == postmaster.Postmaster(os.getpid(), None, "", "", "")


def test_what_is_not_a_running_server_reads_as_none(tmp_path: Path) -> None:
    assert postmaster.read(tmp_path) is None  # no file
    gone = subprocess.Popen(["true"])
    gone.wait()  # reaped: its pid names no process (a crash's stale file)
    assert postmaster.read(_write(tmp_path, str(gone.pid), str(tmp_path))) is None
    assert postmaster.read(_write(tmp_path, "not a pid", str(tmp_path))) is None
    assert postmaster.read(_write(tmp_path)) is None
