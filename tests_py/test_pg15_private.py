"""The PostgreSQL 15 stage of the tests touches only the cluster it starts (scripts/pg15.sh).

A machine whose own Debian cluster `15/main` holds a database is made for real, in a mount and
network namespace of the test's own: temp folders bound over /etc/postgresql,
/var/lib/postgresql, /var/log/postgresql and /run/postgresql, and `pg_createcluster 15 main
--start`, so the cluster is where Debian's tools and libpq's defaults find a machine's, on
port 5432. There the stage runs as `make test` runs it: the Makefile's `test-sql-15` recipe
(its pgTAP run replaced by what that run does to a server: a database and a role made through
the URL it is given) and a shell's own `scripts/pg15.sh url` and `stop`. The machine's
cluster keeps exactly its databases, roles and state; every private cluster is gone after.

And a `scripts/pg15.sh run` interrupted by ^C (SIGINT to its process group) or terminated
(SIGTERM to it alone, as make passes it on) still stops its cluster and removes its folder.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from processes import is_alive

REPO = Path(__file__).resolve().parent.parent
PG15 = REPO / "scripts" / "pg15.sh"
# Settings of this run that would send the stage elsewhere than a fresh `make test` goes.
NOT_PASSED = ("TICKQ_PG15_DIR", "MAKEFLAGS", "MFLAGS", "MAKELEVEL", "DATABASE_URL")

MACHINE = r"""
set -euo pipefail
out="$1"
mount --bind "$out/etc" /etc/postgresql
mount --bind "$out/lib" /var/lib/postgresql
mount --bind "$out/log" /var/log/postgresql
mount --bind "$out/run" /run/postgresql
ip link set lo up
trap 'pg_ctlcluster 15 main stop -m immediate >/dev/null 2>&1 || true' EXIT
pg_createcluster 15 main --start -- --no-sync >/dev/null
machine() { runuser -u postgres -- psql -X -q -A -t -v ON_ERROR_STOP=1 "$@"; }
machine -c "CREATE DATABASE production" -c "CREATE ROLE app_owner LOGIN"
state() {
    pg_lsclusters --no-header
    machine -c "SELECT datname FROM pg_database ORDER BY 1" \
        -c "SELECT rolname || ' ' || rolsuper FROM pg_roles ORDER BY 1"
}
state > "$out/before"
cd "$2"
make --no-print-directory -o venv -o pg15-packages test-sql-15 VPY="$out/pgtap" >&2
url="$(scripts/pg15.sh url)"
echo "$url" >> "$out/urls"
psql -X -q -v ON_ERROR_STOP=1 "$url" -c "CREATE DATABASE by_hand" >&2
scripts/pg15.sh stop
state > "$out/after"
"""

# What tests_sql/run_pgtap.py does to the server it is given, without the tests themselves.
PGTAP = r"""#!/bin/bash
set -euo pipefail
while [ $# -gt 0 ]; do [ "$1" = --database-url ] && url="$2"; shift; done
echo "$url" >> "$(dirname "$0")/urls"
psql -X -q -v ON_ERROR_STOP=1 "$url" -c "CREATE DATABASE tickq_pgtap" -c "CREATE ROLE tq_probe"
"""


def stage_env(tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in NOT_PASSED and not k.startswith("PG")}
    env["TMPDIR"] = str(tmp)  # a default folder of pg15.sh's (no TICKQ_PG15_DIR) is the test's
    return env


@pytest.fixture
def out() -> Iterator[Path]:
    folder = Path(tempfile.mkdtemp(prefix="tq-stage-"))  # short: sockets live under it
    folder.chmod(0o711)  # the server's user passes it
    for name, owner, mode in (("etc", "postgres", 0o755), ("lib", "postgres", 0o755),
                              ("run", "postgres", 0o2775), ("log", "root", 0o1775),
                              ("tmp", "root", 0o711)):
        (folder / name).mkdir()
        shutil.chown(folder / name, owner, "postgres")
        (folder / name).chmod(mode)
    try:
        yield folder
    finally:
        pidfile = folder / "lib" / "15" / "main" / "postmaster.pid"
        with contextlib.suppress(OSError, ValueError):  # the namespace's trap did not run
            os.kill(int(pidfile.read_text().split()[0]), signal.SIGKILL)
        for private in (folder / "tmp").glob("tickq-pg15*"):
            subprocess.run([str(PG15), "stop"], env={**stage_env(folder / "tmp"),
                                                     "TICKQ_PG15_DIR": str(private)})
        shutil.rmtree(folder, ignore_errors=True)


def test_the_pg15_stage_leaves_the_machines_own_cluster_as_it_was(out: Path) -> None:
    (out / "pgtap").write_text(PGTAP)
    (out / "pgtap").chmod(0o755)
    done = subprocess.run(["unshare", "--mount", "--net", "bash", "-c", MACHINE, "machine",
                           str(out), str(REPO)], env=stage_env(out / "tmp"),
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    before, after = (out / "before").read_text(), (out / "after").read_text()
    assert before.split()[:4] == ["15", "main", "5432", "online"], before
    assert "production" in before.splitlines(), before
    assert "app_owner false" in before, before
    assert after == before
    urls = (out / "urls").read_text().splitlines()
    assert len(urls) == 2, urls  # the Makefile's recipe and the shell's own call
    for url in urls:
        host = Path(psycopg.conninfo.conninfo_to_dict(url)["host"])
        assert host.is_relative_to(out / "tmp"), url
        assert not host.exists(), f"{host} is left behind"


@pytest.mark.parametrize("how", ["^C to the process group", "SIGTERM to the script"])
def test_an_interrupted_run_still_removes_its_cluster(how: str, tmp_path: Path) -> None:
    env = stage_env(Path(tempfile.gettempdir()))
    said = tmp_path / "url"
    run = subprocess.Popen(
        [str(PG15), "run", "--", "bash", "-c",
         f'scripts/pg15.sh url > "{said}.tmp" && mv "{said}.tmp" "{said}" && exec sleep 600'],
        cwd=REPO, env=env, start_new_session=True, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True)
    try:
        while not said.exists():
            assert run.poll() is None, run.stderr.read()
            with contextlib.suppress(subprocess.TimeoutExpired):
                run.wait(0.05)
        url = said.read_text().strip()
        folder = Path(psycopg.conninfo.conninfo_to_dict(url)["host"])
        pid = int((folder / "data" / "postmaster.pid").read_text().split()[0])
        with psycopg.connect(url) as conn:
            assert conn.execute("SELECT 1").fetchone() == (1,)
        if how.startswith("^C"):
            os.killpg(run.pid, signal.SIGINT)
        else:
            run.send_signal(signal.SIGTERM)
        run.wait(60)
    finally:
        if run.poll() is None:
            os.killpg(run.pid, signal.SIGKILL)
    assert run.returncode != 0
    assert not folder.exists(), f"{folder} is left behind"
    assert not is_alive(pid)
