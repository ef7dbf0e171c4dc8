"""docs/tutorials/production.md, run as written: its commands, in order, against a PostgreSQL 15
cluster the test starts (tests_py/pg15_cluster.py) with the guide's pg_hba.conf lines (scram over
TCP), by the users the guide names: the DBA as the system user `postgres`, the application
host's user as an unprivileged OS user the test makes (`useradd`, removed afterwards), with
tickq from a wheel installed into a venv of its own (tests_py/wheel_venv.py).

What the page holds is what runs, so the two cannot drift:
- a ```sh block whose first line is `# as postgres` or `# as jobs` runs line by line as that
  user (`# as jobs, until stopped`: started, probed once ready, stopped); any other ```sh block
  (`# as root`) is the administrator's and is not run here, and the test knows which those are;
- a block with `title="~/..."` is a file of the user's, `title="pg_hba.conf"` lines of the
  cluster's pg_hba.conf (reloaded);
- only the guide's placeholders change: the server (`db.example:5432`), the application hosts'
  network, the passwords (`\\password ROLE` is answered with the role's), the page's port.

Then: the roles are exactly the guide's, none may create a database or a role; the owner
migrated; the dispatcher's `check` passed and left the server's list of databases as it was
(it simulated on the embedded PostgreSQL the user's check started); its tick ran the kind; the
reader served the page and the metrics.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import shutil
import subprocess
import sys
import tempfile
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import psycopg
import pytest
from pg15_cluster import BIN, Cluster, cluster
from wheel_venv import REPO, Venv, build_wheel, install

GUIDE = REPO / "docs" / "tutorials" / "production.md"
FENCE = re.compile(r'^```(\w+)(?: title="([^"]+)")?\n(.*?)^```$', re.M | re.S)
ROLES = ("tickq_owner", "tickq_dispatcher", "tickq_reader")
GUIDE_ROLES = {*ROLES, "billing_owner", "billing_dispatcher", "billing_reader"}
# The administrator's blocks, not run here: installing tickq, making the user, the timer.
ROOT_ONLY = ["python3 -m venv /opt/tickq", "DATABASE_URL=postgresql://tickq_dispatcher@"]


@dataclass(frozen=True)
class Block:
    lang: str
    title: str | None
    body: str

    @property
    def who(self) -> str:
        first = self.body.splitlines()[0] if self.body else ""
        return first.removeprefix("# as ").strip() if first.startswith("# as ") else ""

    def lines(self) -> list[str]:
        """The commands, a line ending in a backslash joined to the next."""
        text = self.body.replace("\\\n", " ")
        return [ln for ln in text.splitlines() if ln.strip() and not ln.startswith("#")]


def guide_blocks() -> list[Block]:
    return [Block(m[1], m[2], m[3]) for m in FENCE.finditer(GUIDE.read_text())]


@dataclass
class World:
    """The test's server, its user and what the guide's steps said."""

    server: Cluster
    venv: Venv
    user: str
    home: Path
    dba: Path  # the DBA's working folder
    passwords: dict[str, str] = field(default_factory=lambda: {
        role: secrets.token_urlsafe(12) for role in ROLES})
    ran: dict[str, subprocess.CompletedProcess[str]] = field(default_factory=dict)
    served: dict[str, str] = field(default_factory=dict)
    databases: list[set[str]] = field(default_factory=list)

    def placed(self, text: str) -> str:
        """The guide's text with the test's server, network, passwords and port."""
        text = text.replace("db.example:5432", f"127.0.0.1:{self.server.port}")
        text = text.replace("192.0.2.0/24", "127.0.0.1/32").replace("--port 8787", "--port 0")
        for role, password in self.passwords.items():
            text = text.replace(f"{role.removeprefix('tickq_').upper()}-PASSWORD", password)
        return text

    def env(self, who: str) -> dict[str, str]:
        path = f"{self.venv.bin}:/usr/local/bin:/usr/bin:/bin"
        if who == "postgres":
            return {"PATH": f"{BIN}:{path}", "HOME": str(self.dba), "PGHOST": str(
                self.server.folder), "PGPORT": str(self.server.port), "LANG": "C.UTF-8"}
        return {"PATH": path, "HOME": str(self.home), "TMPDIR": str(self.home / "tmp"),
                "LANG": "C.UTF-8"}

    def run(self, who: str, line: str) -> subprocess.CompletedProcess[str]:
        asked = re.search(r"\\password (\w+)", line)
        answer = f"{self.passwords[asked[1]]}\n" * 2 if asked else ""
        return subprocess.run(
            ["sh", "-c", self.placed(line)], user=self.user if who == "jobs" else who,
            env=self.env(who), cwd=self.home if who == "jobs" else self.dba, input=answer,
            capture_output=True, text=True, timeout=300, start_new_session=True)

    def databases_now(self) -> set[str]:
        with psycopg.connect(self.server.admin_url()) as conn:
            return {r[0] for r in conn.execute("SELECT datname FROM pg_database")}


@contextlib.contextmanager
def os_user(home: Path) -> Iterator[str]:
    """An unprivileged OS user of the test's own, with its home in `home`; removed afterwards
    with its home (after the embedded server its check started is stopped)."""
    name = f"tqg{uuid.uuid4().hex[:8]}"
    subprocess.run(["useradd", "--create-home", "--home-dir", str(home), "--shell",
                    "/usr/sbin/nologin", name], check=True, capture_output=True, timeout=60)
    try:
        (home / "tmp").mkdir()
        shutil.chown(home / "tmp", name, name)
        yield name
    finally:
        subprocess.run(["userdel", "--remove", name], check=False, capture_output=True,
                       timeout=60)


@pytest.fixture(scope="module")
def world() -> Iterator[World]:
    root = Path(tempfile.mkdtemp(prefix="tq-guide-"))  # short: sockets live under it
    root.chmod(0o711)
    (root / "build").mkdir()
    dba = root / "dba"
    dba.mkdir()
    shutil.chown(dba, "postgres", "postgres")
    # The system's Python, which every user may run (this one may live in a home of root's).
    python = f"/usr/bin/python{sys.version_info.major}.{sys.version_info.minor}"
    if not os.access(python, os.X_OK):
        pytest.fail(f"{python} is missing: the guide's user runs tickq with the system's Python")
    try:
        venv = install(build_wheel(root / "build"), root, python)
        with (cluster("local all postgres trust\n", "password_encryption=scram-sha-256")
              as server, os_user(root / "home") as user):
            made = World(server, venv, user, root / "home", dba)
            try:
                follow_the_guide(made)
                yield made
            finally:
                made.run("jobs", "tickq server stop")
    finally:
        shutil.rmtree(root, ignore_errors=True)


def follow_the_guide(world: World) -> None:
    skipped = []
    for block in guide_blocks():
        if block.title is not None:
            write_file(world, block)
        elif block.lang == "sh" and block.who in ("postgres", "jobs"):
            for line in block.lines():
                run_step(world, block.who, line)
        elif block.lang == "sh" and block.who == "jobs, until stopped":
            [line] = block.lines()
            world.served = serve(world, line)
        elif block.lang == "sh":
            skipped.append(block.lines()[0])
    assert [s[:len(p)] for s, p in zip(skipped, ROOT_ONLY)] == ROOT_ONLY, skipped


def write_file(world: World, block: Block) -> None:
    text = world.placed(block.body)
    if block.title == "pg_hba.conf":
        with (world.server.pgdata / "pg_hba.conf").open("a") as hba:
            hba.write(text)
        with psycopg.connect(world.server.admin_url(), autocommit=True) as admin:
            admin.execute("SELECT pg_reload_conf()")
    elif block.title is not None and block.title.startswith("~/"):
        path = world.home / block.title.removeprefix("~/")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        for made in (path, path.parent):
            shutil.chown(made, world.user, world.user)


def run_step(world: World, who: str, line: str) -> None:
    command = re.search(r"(?:^|\s)tickq (\w+)", line)
    checking = who == "jobs" and command is not None and command[1] == "check"
    if checking:
        world.databases.append(world.databases_now())
    done = world.run(who, line)
    assert done.returncode == 0, (line, done.stdout[-2000:], done.stderr[-2000:])
    if checking:
        world.databases.append(world.databases_now())
    if who == "jobs" and command is not None:
        world.ran[command[1]] = done


def serve(world: World, line: str) -> dict[str, str]:
    """The command started as the user, its page and metrics fetched once it serves."""
    process = subprocess.Popen(
        ["sh", "-c", f"exec env {world.placed(line)}"], user=world.user, env=world.env("jobs"),
        cwd=world.home, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True)
    try:
        assert process.stdout is not None
        first = process.stdout.readline()
        found = re.search(r"on (http://\S+/) ", first)
        assert found, first + (process.stderr.read() if process.poll() is not None else "")
        pages = {}
        for path in ("", "metrics"):
            with urllib.request.urlopen(found[1] + path, timeout=30) as answer:
                assert answer.status == 200
                pages[path or "/"] = answer.read().decode()
        return pages
    finally:
        process.terminate()
        process.communicate(timeout=60)


def test_the_roles_are_the_guides_and_none_may_create_a_database(world: World) -> None:
    with psycopg.connect(world.server.admin_url()) as conn:
        roles = conn.execute("SELECT rolname, rolsuper OR rolcreatedb OR rolcreaterole"
                             " FROM pg_roles WHERE rolname !~ '^pg_'").fetchall()
    assert {name for name, _ in roles} == GUIDE_ROLES | {"postgres"}, roles
    assert [name for name, mighty in roles if mighty] == ["postgres"], roles


def test_the_owner_migrated(world: World) -> None:
    assert "migration 0100_baseline.sql" in world.ran["migrate"].stdout


def test_the_dispatchers_check_passed_and_left_the_servers_databases_alone(
    world: World,
) -> None:
    done = world.ran["check"]
    assert "capacity fits" in done.stdout and "worst case fits" in done.stdout, done.stdout
    before, after = world.databases
    assert after == before == {"postgres", "template0", "template1", "tickq"}
    # the simulation ran on the embedded PostgreSQL the user's check started, in its home
    assert (world.home / ".local" / "share" / "tickq" / "pg" / "PG_VERSION").exists()


def test_the_dispatcher_ticked_and_the_reader_served(world: World) -> None:
    with psycopg.connect(world.server.admin_url("tickq")) as conn:
        runs = conn.execute("SELECT kind, outcome::text, output_tail FROM tickq.job_run"
                            " WHERE kind = 'hello'").fetchall()
    assert runs == [("hello", "ok", "hello\n")], runs
    assert re.search(r"^hello\b", world.ran["status"].stdout, re.M), world.ran["status"].stdout
    assert "hello" in world.served["/"] and "tickq_" in world.served["metrics"]
    assert "tickq_" in world.ran["metrics"].stdout
    assert os.stat(world.home / ".pgpass").st_mode & 0o077 == 0
