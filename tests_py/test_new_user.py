"""What a new user meets first, tried as one: a registry not where tickq looked, a file saved by
Notepad as "UTF-8 with BOM", a PATH folder the user may not search, a passfile line for another
host. Real processes; the passfile case against a PostgreSQL 15 cluster this module starts."""

from __future__ import annotations

import codecs
import json
import os
import pwd
import shutil
import socket
import subprocess
import sys
import sysconfig
import tempfile
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest
from processes import REPO, tickq, tickq_env

BOM = codecs.BOM_UTF8

# A real crontab (0xConnorRhodes/cron-scripts, file `crontab`, commit
# 6920378adbe2a10dba87b8727b11e5d58b3e7e07), its jobs as written there.
REAL_CRONTAB = (
    "SHELL=/bin/bash\n"
    "PATH=/sbin:/bin:/usr/sbin:/usr/bin:/home/cron/.local/bin\n\n"
    "*/10 * * * * /usr/bin/ruby /home/cron/code/cron-scripts/check_maestral_working.rb\n"
    "0 3 * * * /home/cron/code/cron-scripts/create_daily_note.py\n"
)


# ---------------------------------------------------------------- a registry not found


def test_a_missing_registry_names_the_folder_looked_in_and_how_to_name_another(
    tmp_path: Path,
) -> None:
    done = tickq("sync", cwd=tmp_path)
    assert done.returncode == 2, (done.stdout, done.stderr)
    [line, *_] = done.stderr.splitlines()
    assert "registry.toml: file not found" in line, line
    assert f"in {tmp_path}" in line, line
    assert "--registry" in line and "TICKQ_REGISTRY" in line, line
    assert "Traceback" not in done.stderr


# ---------------------------------------------------------------- a byte order mark


def test_a_registry_saved_with_a_bom_is_read_as_without_it(tmp_path: Path, db_url: str) -> None:
    # examples/demo/registry.toml as Notepad's "UTF-8 with BOM" saves it.
    folder = tmp_path / "demo"
    shutil.copytree(REPO / "examples" / "demo", folder)
    registry = folder / "registry.toml"
    registry.write_bytes(BOM + registry.read_bytes())
    done = tickq("sync", "--registry", str(registry), "--database-url", db_url)
    assert done.returncode == 0, done.stderr
    kinds = tomllib.loads((REPO / "examples" / "demo" / "registry.toml").read_text())["kinds"]
    assert all(name in done.stdout for name in kinds), done.stdout


def test_a_crontab_saved_with_a_bom_is_read_line_by_line_as_cron_reads_it(
    tmp_path: Path,
) -> None:
    crontab = tmp_path / "crontab"
    crontab.write_bytes(BOM + REAL_CRONTAB.encode())
    done = tickq("legacy", "import", str(crontab), "--registry", str(tmp_path / "r.toml"))
    assert done.returncode == 0, done.stderr
    assert "glob" not in done.stderr and "\ufeff" not in done.stdout + done.stderr
    kinds = tomllib.loads(done.stdout)["kinds"]
    assert {k["legacy"] for k in kinds.values()} == {
        line for line in REAL_CRONTAB.splitlines() if line[:1] in ("*", "0")}
    # Line 1, behind the BOM, is still the SHELL cron reads: every job gets it.
    assert [k["env"]["SHELL"] for k in kinds.values()] == ["/bin/bash", "/bin/bash"]
    assert [k["cron"] for k in kinds.values() if "cron" in k] == ["*/10 * * * *"]


# ---------------------------------------------------------------- a PATH folder not searchable


@pytest.fixture
def new_user() -> Iterator[pwd.struct_passwd]:
    """An unprivileged user of its own, removed afterwards (as `sudo -u app` runs one)."""
    name = f"tq_new_{os.getpid()}"
    subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/bin/sh", name],
                   check=True, capture_output=True)
    try:
        yield pwd.getpwnam(name)
    finally:
        subprocess.run(["userdel", name], check=False, capture_output=True)


def test_a_path_folder_the_user_cannot_search_is_skipped_as_execvp_skips_it(
    new_user: pwd.struct_passwd,
) -> None:
    home = Path(tempfile.mkdtemp(prefix="tq-new-user-"))
    try:
        _run_behind_a_private_path_folder(home, new_user)
    finally:
        shutil.rmtree(home, ignore_errors=True)


def _python_of(user: pwd.struct_passwd, env: dict[str, str]) -> str:
    """This Python if `user` may run it, else the system's of the same version (this venv's
    packages on PYTHONPATH): a venv made from a Python under root's 0700 home is root's only."""
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    for python in (sys.executable, f"/usr/bin/{version}", f"/usr/local/bin/{version}"):
        try:
            tried = subprocess.run([python, "-c", "import psycopg, tickq"], env=env,
                                   user=user.pw_uid, group=user.pw_gid, extra_groups=[],
                                   capture_output=True, check=False, cwd="/")
        except OSError:  # not this user's to run
            continue
        if tried.returncode == 0:
            return python
    raise AssertionError(f"no {version} that {user.pw_name} may run")


def _run_behind_a_private_path_folder(home: Path, user: pwd.struct_passwd) -> None:
    home.chmod(0o755)
    private = home / "root-bin"  # as root's ~/.cargo/bin: first in PATH, 0700, root's
    private.mkdir(mode=0o700)
    (private / "sh").write_text("#!/bin/sh\necho root\\'s own sh\n")
    (private / "sh").chmod(0o755)
    project = home / "project"
    project.mkdir()
    (project / "registry.toml").write_text(
        '[kinds.hello]\ncommand = ["sh", "-c", "echo hi from $0"]\nevery = "1h"\n'
        'timeout = "30s"\n')
    mine = home / "mine"  # the user's own data, ledger and cache folders
    mine.mkdir()
    os.chown(mine, user.pw_uid, user.pw_gid)
    env = tickq_env(PATH=f"{private}:/usr/local/bin:/usr/bin:/bin", HOME=str(mine),
                    TICKQ_DATA_DIR=str(mine / "data"), TICKQ_RUN_DIR=str(mine / "run"),
                    TICKQ_CACHE_DIR=str(mine / "cache"))
    env["PYTHONPATH"] += os.pathsep + sysconfig.get_paths()["purelib"]
    python = _python_of(user, env)

    def as_user(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([python, "-m", "tickq.cli", *args], cwd=project,
                              env=env, user=user.pw_uid, group=user.pw_gid, extra_groups=[],
                              capture_output=True, text=True, timeout=300)

    try:
        checked = as_user("check")
        assert checked.returncode == 0, (checked.stdout, checked.stderr)
        assert "Permission denied" not in checked.stderr, checked.stderr
        ran = as_user("run", "hello")
        assert ran.returncode == 0, (ran.stdout, ran.stderr)
        [run] = json.loads(as_user("history", "hello", "--json").stdout)
        assert run["outcome"] == "ok", run
        detail = as_user("history", "--run", str(run["run_id"]))
        assert "hi from sh" in detail.stdout and "dispatcher error" not in detail.stdout
        # Found nowhere else, the entry that refused is named with execvp's error (EACCES).
        (private / "only-root").write_text("#!/bin/sh\n")
        asked = subprocess.run(
            [python, "-c", "import pathlib, tickq.host.programs as p; "
             "print(p.resolve(['only-root'], pathlib.Path('.')).problem)"],
            cwd=project, env=env, user=user.pw_uid, group=user.pw_gid, extra_groups=[],
            capture_output=True, text=True, check=True)
        assert asked.stdout.startswith("'only-root': permission denied"), asked.stdout
        assert f"{private} is not searchable" in asked.stdout, asked.stdout
    finally:
        as_user("server", "stop")


# ---------------------------------------------------------------- a passfile line for another host

PG15 = Path("/usr/lib/postgresql/15/bin")
ROLE, PASSWORD = "tq_app", "pa55:w0rd-never-shown"


@pytest.fixture(scope="module")
def scram_server() -> Iterator[int]:
    """Debian's PostgreSQL 15 in a folder of its own, on a free port of localhost, asking every
    TCP login for a scram password; removed afterwards. Yields the port."""
    assert (PG15 / "initdb").exists(), "PostgreSQL 15 is not installed: scripts/pg15.sh install"
    folder = Path(tempfile.mkdtemp(prefix="tq-scram-"))
    folder.chmod(0o711)
    data = folder / "data"
    data.mkdir(mode=0o700)
    shutil.chown(data, "postgres", "postgres")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]

    def as_postgres(*argv: str) -> None:
        subprocess.run(["runuser", "-u", "postgres", "--", *argv], check=True,
                       capture_output=True, timeout=120, cwd="/")

    try:
        as_postgres(str(PG15 / "initdb"), "-D", str(data), "-U", "postgres",
                    "--auth-local=trust", "--auth-host=scram-sha-256")
        as_postgres(str(PG15 / "pg_ctl"), "-D", str(data), "-w", "-l", str(data / "log"), "-o",
                    f"-c listen_addresses=localhost -c port={port} "
                    f"-c unix_socket_directories={data}", "start")
        as_postgres(str(PG15 / "psql"), "-X", "-q", "-h", str(data), "-p", str(port), "-d",
                    "postgres", "-c", f"CREATE ROLE {ROLE} LOGIN PASSWORD '{PASSWORD}'",
                    "-c", f"CREATE DATABASE queue OWNER {ROLE}")
        yield port
    finally:
        subprocess.run(["runuser", "-u", "postgres", "--", str(PG15 / "pg_ctl"), "-D",
                        str(data), "-w", "-m", "immediate", "stop"], capture_output=True,
                       check=False, cwd="/")
        shutil.rmtree(folder, ignore_errors=True)


def test_no_password_found_names_what_was_looked_up_and_where(
    scram_server: int, tmp_path: Path,
) -> None:
    port = scram_server
    passfile = tmp_path / "pgpass"
    escaped = PASSWORD.replace("\\", "\\\\").replace(":", "\\:")  # as the passfile wants it
    passfile.write_text(f"# the DBA's line\n127.0.0.1:{port}:queue:{ROLE}:{escaped}\n")
    passfile.chmod(0o600)
    registry = tmp_path / "registry.toml"
    registry.write_text('[kinds.job]\ncommand = ["true"]\nevery = "5m"\ntimeout = "1m"\n')

    def sync(url: str) -> subprocess.CompletedProcess[str]:
        return tickq("sync", "--registry", str(registry), "--database-url", url,
                     env=tickq_env(PGPASSFILE=str(passfile)))

    assert sync(f"postgresql://{ROLE}@127.0.0.1:{port}/queue").returncode == 0  # the line works

    for url, differs in ((f"postgresql://{ROLE}@localhost:{port}/queue", "host"),
                         (f"postgresql://{ROLE}@127.0.0.1:{port}/queeu", "database")):
        refused = sync(url)
        assert refused.returncode == 3, (refused.stdout, refused.stderr)
        [line] = refused.stderr.splitlines()
        host, dbname = ("localhost", "queue") if differs == "host" else ("127.0.0.1", "queeu")
        assert (f"no password found for host {host}, port {port}, database {dbname}, "
                f"user {ROLE}") in line, line
        assert f"in {passfile} (PGPASSFILE)" in line, line
        assert f"differs only in the {differs}" in line, line
        assert PASSWORD not in refused.stdout + refused.stderr

    passfile.chmod(0o644)  # libpq ignores a passfile others may read
    loose = sync(f"postgresql://{ROLE}@127.0.0.1:{port}/queue")
    assert loose.returncode == 3, (loose.stdout, loose.stderr)
    assert "0644" in loose.stderr and "chmod 600" in loose.stderr, loose.stderr
    assert PASSWORD not in loose.stdout + loose.stderr

    passfile.unlink()
    missing = sync(f"postgresql://{ROLE}@localhost:{port}/queue").stderr
    assert f"no passfile at {passfile} (PGPASSFILE)" in missing, missing
