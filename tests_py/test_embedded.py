"""The embedded PostgreSQL is tickq's alone: its socket sits in a private folder (also when the
data folder's path is too long for a socket), no local connection is trusted, the server runs
without group root, and no folder tickq did not create changes mode. Real servers, started and
stopped by the test; root is what CI runs as, where all of this matters most."""

from __future__ import annotations

import os
import pwd
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from psycopg import conninfo

from tickq.db import embedded

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture
def folder() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="tickq-emb-"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def _server_uid() -> int:
    return pwd.getpwnam(embedded.SERVER_USER).pw_uid if os.geteuid() == 0 else os.geteuid()


def test_a_long_data_folder_gets_a_private_socket_folder_and_no_trust(folder: Path) -> None:
    pgdata = folder / ("d" * 120) / "pg"
    pgdata.parent.mkdir()
    assert len(str(pgdata / ".s.PGSQL.5432")) > 107
    url = embedded.ensure_server(pgdata)
    try:
        socket_dir = Path(conninfo.conninfo_to_dict(url)["host"])
        st = socket_dir.lstat()
        assert stat.S_ISDIR(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o700
        assert st.st_uid == _server_uid()
        with psycopg.connect(url) as conn:
            rules = conn.execute(
                "SELECT type, auth_method FROM pg_hba_file_rules WHERE error IS NULL").fetchall()
        assert rules and all(method != "trust" for _type, method in rules), rules
        assert all(kind == "local" for kind, _method in rules), rules
        postmaster = int((pgdata / "postmaster.pid").read_text().split()[0])
        status = Path(f"/proc/{postmaster}/status").read_text()
        fields = {line.split(":")[0]: line.split()[1:] for line in status.splitlines()}
        gids, groups = fields["Gid"], fields["Groups"]
        if os.geteuid() == 0:
            assert "0" not in gids and "0" not in groups, status
            # Another local user reaches neither the socket nor the database.
            psql = str(embedded.bin_dir() / "psql")
            other = subprocess.run(
                ["runuser", "-u", "nobody", "--", psql, "-h", str(socket_dir), "-U", "postgres",
                 "-d", "postgres", "-c", "SELECT 1"],
                capture_output=True, text=True, timeout=30, check=False)
            assert other.returncode != 0, other.stdout
    finally:
        assert embedded.stop_server(pgdata)


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX modes")
def test_a_private_parent_of_the_data_folder_stays_private(folder: Path) -> None:
    private = folder / "private"
    private.mkdir(mode=0o700)
    private.chmod(0o700)
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    env |= {"TICKQ_DATA_DIR": str(private / "tickq"), "PYTHONPATH": str(REPO / "python_runner")}
    done = subprocess.run([sys.executable, "-m", "tickq.cli", "status"], env=env,
                          capture_output=True, text=True, timeout=120, check=False)
    try:
        assert stat.S_IMODE(private.stat().st_mode) == 0o700
        assert stat.S_IMODE(folder.stat().st_mode) == 0o755
        if os.geteuid() == 0:
            # The server's own user cannot pass a 0700 folder of root's: refused, with what to do.
            assert done.returncode == 3, done.stdout + done.stderr
            [line] = done.stderr.strip().splitlines()
            assert str(private) in line and "TICKQ_DATA_DIR" in line
        else:
            assert done.returncode == 0, done.stderr
    finally:
        embedded.stop_server(private / "tickq" / "pg")
