"""tickq as `pip install .` gives it, never `-e`: a wheel of this checkout in a venv of its own
outside the checkout (tests_py/wheel_venv.py), its `tickq` run from a folder outside the
checkout, on an embedded PostgreSQL its own commands start in a temp folder.

Every command that reads a file shipped with the package runs: `roles print`, `migrate`,
`tick`, `status`, `demo`, `report`, `serve`, `completion`, `check`, and the registry's JSON
Schema behind every registry read. Each command's own record of what it opened, listed and
started (the venv's audit probe) must name only files of the installed package that exist, and
nothing of the checkout; the wheel must hold every file of the package's source tree.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import psycopg
import pytest
from psycopg import sql
from wheel_venv import REPO, Venv, build_wheel, install, package_files, wheel_names

from tickq.db import embedded

REGISTRY = """\
[settings]
slots = 2
tick = "5m"

[kinds.nightly]
command = ["/bin/true"]
every = "1h"
timeout = "1m"
"""
PASSWORD = "wheel-test-password"  # the embedded server asks any role but postgres for one


@dataclass
class Ran:
    result: subprocess.CompletedProcess[str]
    events: list[tuple[str, Path]]  # (open|list|exec, absolute path) of every process it ran

    def touched(self, path: Path) -> bool:
        return any(p == path for _kind, p in self.events)


@dataclass
class Installed:
    venv: Venv
    root: Path  # 0711: the embedded server's user must pass it to reach its data
    runs: int = 0

    @property
    def project(self) -> Path:
        return self.root / "project"

    @property
    def superuser_url(self) -> str:
        return embedded.queue_uri(self.root / "data" / "pg", "postgres")

    def env(self, audit: Path) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("TICKQ_", "PG", "PYTHON")) and k not in (
                   "DATABASE_URL", "VIRTUAL_ENV", "COLUMNS")}
        env.update(PATH=f"{self.venv.bin}:/usr/local/bin:/usr/bin:/bin",
                   HOME=str(self.root / "home"), TICKQ_DATA_DIR=str(self.root / "data"),
                   TICKQ_RUN_DIR=str(self.root / "run"), TICKQ_CACHE_DIR=str(self.root / "cache"),
                   TICKQ_TEST_AUDIT=str(audit))
        return env

    def run(self, *args: str, cwd: Path | None = None) -> Ran:
        self.runs += 1
        audit = self.root / f"audit-{self.runs}.log"
        result = subprocess.run([str(self.venv.tickq), *args], cwd=cwd or self.project,
                                env=self.env(audit), capture_output=True, text=True, timeout=180)
        ran = Ran(result, _events(audit))
        assert not self.astray(ran), self.astray(ran)
        return ran

    def astray(self, ran: Ran) -> list[str]:
        """What a run reached that is neither an existing file of the installed package nor
        outside the checkout."""
        package, dev_venv = self.venv.package, REPO / ".venv"
        found = []
        for kind, path in ran.events:
            if path.is_relative_to(package) and not path.exists():
                found.append(f"{kind} {path}: not in the installed package")
            if path.is_relative_to(REPO) and not path.is_relative_to(dev_venv):
                found.append(f"{kind} {path}: a file of the checkout")
        return found


def _events(audit: Path) -> list[tuple[str, Path]]:
    lines = audit.read_text().splitlines() if audit.exists() else []
    return [(kind, Path(path)) for kind, path in (line.split("\t", 1) for line in lines)]


@pytest.fixture(scope="module")
def installed() -> Iterator[Installed]:
    root = Path(tempfile.mkdtemp(prefix="tq-wheel-"))  # short: the server's socket lives in it
    root.chmod(0o711)
    (root / "build").mkdir()
    (root / "project").mkdir()
    (root / "project" / "registry.toml").write_text(REGISTRY)
    found = None
    try:
        found = Installed(install(build_wheel(root / "build"), root), root)
        first = found.run("migrate")  # the embedded default: starts the server in TICKQ_DATA_DIR
        assert first.result.returncode == 0, first.result.stderr
        assert first.touched(found.venv.package / "sql" / "migrations" / "0100_baseline.sql")
        with psycopg.connect(found.superuser_url, autocommit=True) as admin:
            # This test's own server: nothing it writes must survive a crash of the machine.
            admin.execute("ALTER SYSTEM SET fsync = off")
            admin.execute("SELECT pg_reload_conf()")
        yield found
    finally:
        if found is not None:
            found.run("server", "stop")
        embedded.stop_server(root / "data" / "pg")  # when the command could not
        shutil.rmtree(root, ignore_errors=True)


def test_the_wheel_holds_every_file_of_the_package(installed: Installed) -> None:
    names = wheel_names(installed.venv.wheel)
    assert not package_files() - names, sorted(package_files() - names)
    strays = {n for n in names if not n.startswith(("tickq/", "tickq-"))}
    assert not strays, sorted(strays)


def test_roles_print_then_the_owner_migrates_and_the_dispatcher_ticks(installed: Installed) -> None:
    package = installed.venv.package
    roles = installed.run("roles", "print")
    assert roles.result.returncode == 0, roles.result.stderr
    assert roles.touched(package / "sql" / "roles.sql")

    with psycopg.connect(installed.superuser_url, autocommit=True) as admin:
        admin.execute("CREATE DATABASE wheel_roles")
    url = psycopg.conninfo.make_conninfo(installed.superuser_url, dbname="wheel_roles")
    with psycopg.connect(url, autocommit=True) as admin:
        admin.execute(roles.result.stdout)  # type: ignore[arg-type]
        for role in ("tickq_owner", "tickq_dispatcher"):
            admin.execute(sql.SQL("ALTER ROLE {} PASSWORD {}").format(
                sql.Identifier(role), sql.Literal(PASSWORD)))

    def as_role(role: str) -> str:
        return psycopg.conninfo.make_conninfo(url, user=role, password=PASSWORD)

    migrated = installed.run("migrate", "--database-url", as_role("tickq_owner"))
    assert migrated.result.returncode == 0, migrated.result.stderr
    assert migrated.touched(package / "sql" / "api" / "99_privileges.sql")
    ticked = installed.run("tick", "--database-url", as_role("tickq_dispatcher"))
    assert ticked.result.returncode == 0, ticked.result.stderr
    assert ticked.touched(package / "db" / "queries" / "claim_jobs.sql")
    status = installed.run("status", "--database-url", as_role("tickq_dispatcher"))
    assert status.result.returncode == 0, status.result.stderr
    assert "nightly" in status.result.stdout


def test_demo_report_and_serve_from_the_wheel(installed: Installed) -> None:
    package = installed.venv.package
    demo = installed.run("demo")
    assert demo.result.returncode == 0, demo.result.stdout + demo.result.stderr
    for kind, outcome in (("hello", "ok"), ("flaky_upstream", "ok"), ("slow_report", "timeout")):
        assert re.search(rf"run\.finished kind={kind} .*outcome={outcome} ", demo.result.stdout)
    assert demo.touched(package / "demo" / "registry.toml")
    assert demo.touched(package / "demo" / "bin" / "hello.sh")

    demo_url = psycopg.conninfo.make_conninfo(installed.superuser_url, dbname="tickq_demo")
    page = installed.root / "page.html"
    report = installed.run("report", "--html", str(page), "--database-url", demo_url)
    assert report.result.returncode == 0, report.result.stderr
    assert report.touched(package / "page" / "templates" / "page.html")
    assert 'data-kind="flaky_upstream"' in page.read_text()

    audit = installed.root / "audit-serve.log"
    server = subprocess.Popen([str(installed.venv.tickq), "serve", "--port", "0",
                               "--database-url", demo_url], cwd=installed.project,
                              env=installed.env(audit), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    try:
        line = server.stdout.readline()
        found = re.search(r"http://127\.0\.0\.1:\d+/", line)
        assert found, line + (server.stderr.read() if server.poll() is not None else "")
        address = found.group(0)
        with urllib.request.urlopen(address, timeout=30) as answer:
            assert answer.status == 200
            assert 'data-kind="hello"' in answer.read().decode()
        with urllib.request.urlopen(address + "metrics", timeout=30) as answer:
            assert "tickq_" in answer.read().decode()
    finally:
        server.terminate()
        server.wait(10)
    served = Ran(subprocess.CompletedProcess([], 0), _events(audit))
    assert served.touched(package / "page" / "templates" / "page.html")
    assert not installed.astray(served), installed.astray(served)


def test_completion_from_the_wheel_completes_commands_and_kinds(installed: Installed) -> None:
    completion = installed.run("completion", "bash")
    assert completion.result.returncode == 0, completion.result.stderr
    script = installed.root / "completion.bash"
    script.write_text(completion.result.stdout)
    assert str(installed.venv.tickq) in completion.result.stdout

    def complete(*words: str) -> list[str]:
        line = " ".join(f"'{w}'" for w in words)
        done = subprocess.run(
            ["bash", "-c", f'source "$0"; COMP_WORDS=({line}); COMP_CWORD={len(words) - 1};'
                           ' _tickq; printf "%s\\n" "${COMPREPLY[@]}"', str(script)],
            cwd=installed.project, env=installed.env(installed.root / "audit-bash.log"),
            capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        return done.stdout.split()

    assert complete("tickq", "rol") == ["roles"]
    assert complete("tickq", "run", "ni") == ["nightly"]


def test_check_and_the_registry_schema_from_the_wheel(installed: Installed) -> None:
    package = installed.venv.package
    check = installed.run("check")
    assert check.result.returncode == 0, check.result.stdout + check.result.stderr
    assert check.touched(package / "registry" / "registry.schema.json")
    assert check.touched(package / "db" / "queries" / "capacity.sql")

    wrong = installed.project / "wrong"
    wrong.mkdir()
    (wrong / "registry.toml").write_text(REGISTRY.replace('every = "1h"', "every = 3600"))
    refused = installed.run("check", cwd=wrong)
    assert refused.result.returncode == 2, refused.result.stderr
    assert "every" in refused.result.stderr and "Traceback" not in refused.result.stderr
    assert refused.touched(package / "registry" / "registry.schema.json")
