"""Test databases: one server per session, one template, one fresh database per test.

The server is, in this order of preference:
- ``DATABASE_URL`` if set (its role must be allowed to create databases);
- with ``TICKQ_TEST_DOCKER=1``, a testcontainers PostgresContainer of the image docker/Dockerfile
  builds on;
- else an embedded PostgreSQL 18 in a fresh temp folder, stopped and removed at session end.

``tickq_template`` is created and migrated once per session; each test that asks for ``db_url``
or ``conn`` gets ``CREATE DATABASE t_<uuid> TEMPLATE tickq_template``, dropped afterwards.

Under pytest-xdist (``-n N``) each worker is a session of its own: its own embedded server, its
own template (named after the worker, for a shared DATABASE_URL). What workers share is made
safe here: the PostgreSQL 15 cluster of scripts/pg15.sh is one per run (the controller's, each
test names its own databases), the embedded server's system user is made before any worker
starts, and the modules that build network namespaces run on one worker
(``xdist_group("netns")``, with ``--dist loadgroup``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from dbroles import Roles, made_roles

from tickq import db

# One template per xdist worker ("gw0", "gw1", ...), so workers may share a DATABASE_URL.
TEMPLATE_DB = "tickq_template" + (
    f"_{os.environ['PYTEST_XDIST_WORKER']}" if os.environ.get("PYTEST_XDIST_WORKER") else "")
REPO = Path(__file__).resolve().parent.parent


def _docker_image() -> str:
    """The image docker/Dockerfile starts FROM, so tests and docker-compose.yml agree."""
    for line in (REPO / "docker" / "Dockerfile").read_text().splitlines():
        if line.startswith("FROM "):
            return line.split()[1]
    raise RuntimeError("docker/Dockerfile has no FROM line")


@pytest.fixture(scope="session")
def pg_server_url() -> Iterator[str]:
    """A URL of a PostgreSQL server the tests may create and drop databases on."""
    if os.environ.get("DATABASE_URL"):
        yield os.environ["DATABASE_URL"]
    elif os.environ.get("TICKQ_TEST_DOCKER") == "1":
        from testcontainers.community.postgres import PostgresContainer

        with PostgresContainer(_docker_image(), driver=None) as container:
            yield container.get_connection_url()
    else:
        from tickq.db import embedded

        folder = Path(tempfile.mkdtemp(prefix="tickq-test-"))
        folder.chmod(0o711)  # as root, the server's own user must pass this folder of ours
        pgdata = folder / "pg"
        try:
            yield embedded.ensure_server(pgdata)
        finally:
            embedded.stop_server(pgdata)
            shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="session")
def template_db(pg_server_url: str) -> Iterator[str]:
    """Name of a database migrated once per session, to copy for each test."""
    db.drop_database(pg_server_url, TEMPLATE_DB)  # a leftover of an interrupted run
    url = db.create_database(pg_server_url, TEMPLATE_DB)
    with db.connect(url) as conn:
        db.migrate(conn)
    yield TEMPLATE_DB
    db.drop_database(pg_server_url, TEMPLATE_DB)


def _unique_name() -> str:
    return f"t_{uuid.uuid4().hex}"


@pytest.fixture
def db_url(pg_server_url: str, template_db: str) -> Iterator[str]:
    """URL of a fresh, migrated database for this test alone."""
    name = _unique_name()
    url = db.create_database(pg_server_url, name, template=template_db)
    yield url
    db.drop_database(pg_server_url, name)


@pytest.fixture
def empty_db_url(pg_server_url: str) -> Iterator[str]:
    """URL of a fresh database with nothing of tickq in it (for migrator tests)."""
    name = _unique_name()
    url = db.create_database(pg_server_url, name)
    yield url
    db.drop_database(pg_server_url, name)


@pytest.fixture
def conn(db_url: str) -> Iterator[psycopg.Connection]:
    """An autocommit connection to this test's database."""
    with db.connect(db_url) as connection:
        yield connection


@pytest.fixture
def roles(pg_server_url: str) -> Iterator[Roles]:
    """sql/roles.sql's owner, dispatcher and reader in a fresh database (tests_py/dbroles.py)."""
    with made_roles(pg_server_url) as made:
        yield made


@pytest.fixture(autouse=True)
def scratch_on_the_test_server(request: pytest.FixtureRequest,
                               monkeypatch: pytest.MonkeyPatch) -> None:
    """A test with the test server has `check` and `simulate` make their scratch databases there
    (TICKQ_SCRATCH_URL), never on an embedded PostgreSQL of the machine's."""
    if "pg_server_url" in request.fixturenames:
        monkeypatch.setenv("TICKQ_SCRATCH_URL", request.getfixturevalue("pg_server_url"))


@pytest.fixture(autouse=True)
def own_ledger_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Each test gets its own ledger of running commands (tickq.orphans), so a dispatcher a test
    kills on purpose is reaped by that test only. Dispatchers started as processes inherit it."""
    folder = tmp_path / "ledger"
    monkeypatch.setenv("TICKQ_RUN_DIR", str(folder))
    # and its own cache of registry texts that passed the schema (tickq.registry.shape_cache)
    monkeypatch.setenv("TICKQ_CACHE_DIR", str(tmp_path / "cache"))
    return folder


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Under xdist, the tests of a module that share a module-scoped fixture (a queue after real
    ticks, a server) run on one worker, which builds that fixture once, as a run without xdist
    does; other tests go to whichever worker is free."""
    for item in items:
        if item.get_closest_marker("xdist_group"):
            continue
        fixtures = getattr(item, "_fixtureinfo", None)
        defs = fixtures.name2fixturedefs.values() if fixtures else ()
        if any(d[-1].scope == "module" for d in defs if d):
            item.add_marker(pytest.mark.xdist_group(item.module.__name__))


def pytest_collection_finish(session: pytest.Session) -> None:
    """A worker stops at once if xdist dropped the groups (it marks a grouped test's node id with
    "@group"; pytest 9.2 ignores that, pytest-dev/pytest-xdist#1386): the tests would still
    pass, each module fixture built on every worker and the netns modules run at once."""
    if getattr(session.config.option, "loadgroup", False):
        lost = [i.nodeid for i in session.items
                if i.get_closest_marker("xdist_group") and "@" not in i.nodeid]
        if lost:
            raise pytest.UsageError(f"--dist loadgroup lost the groups of {len(lost)} tests "
                                    f"({lost[0]}, ...): pytest {pytest.__version__} with "
                                    "this pytest-xdist")


# ---------------------------------------------------------------- PostgreSQL 15 (scripts/pg15.sh)

_OWN_PG15_DIR: list[str] = []
_OWN_DATA_DIR: list[Path] = []


def pytest_configure(config: pytest.Config) -> None:
    """Outside `make test` (whose `scripts/pg15.sh run` sets TICKQ_PG15_DIR), this pytest run
    gets a folder of its own for the PostgreSQL 15 cluster that `scripts/pg15.sh url` starts on
    the first ask; every process the tests start inherits it, xdist's workers too (they start
    after this, in the controller's environment, so they find the variable set).

    The same way, TICKQ_DATA_DIR names a folder of this run's: a `tickq` the tests start without
    a server of the test's (no DATABASE_URL, no TICKQ_SCRATCH_URL) finds its embedded PostgreSQL
    there, never the machine's own (as root /var/lib/tickq). No test should need it: one that
    starts a server there fails the run (`pytest_sessionfinish`)."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        return  # a worker: the controller owns the folder
    _before_workers()
    if not os.environ.get("TICKQ_PG15_DIR"):
        folder = tempfile.mkdtemp(prefix="tickq-pg15.")
        os.environ["TICKQ_PG15_DIR"] = folder
        _OWN_PG15_DIR.append(folder)
    data = Path(tempfile.mkdtemp(prefix="tickq-data."))
    data.chmod(0o711)  # as root, the embedded server's own user must pass it
    os.environ["TICKQ_DATA_DIR"] = str(data)
    _OWN_DATA_DIR.append(data)


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    """The run fails if a test started the embedded server of the run's TICKQ_DATA_DIR: that
    test would have started (and left running) the machine's own without it."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        return
    for data in _OWN_DATA_DIR:
        if (data / "pg").exists():
            reporter = session.config.pluginmanager.get_plugin("terminalreporter")
            reporter.write("\n")
            reporter.write_line(
                f"a test started an embedded PostgreSQL in {data} (TICKQ_DATA_DIR): it ran "
                "tickq with no server of its own; give it pg_server_url (conftest.py)", red=True)
            session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_unconfigure(config: pytest.Config) -> None:
    """The cluster of this run's folder stopped and the folder removed, also after ^C; the same
    for an embedded server in the run's data folder."""
    for folder in _OWN_PG15_DIR:
        subprocess.run([str(REPO / "scripts" / "pg15.sh"), "stop"], check=False, timeout=120,
                       env={**os.environ, "TICKQ_PG15_DIR": folder})
    for data in _OWN_DATA_DIR:
        if (data / "pg").exists():
            from tickq.db import embedded

            embedded.stop_server(data / "pg")
        shutil.rmtree(data, ignore_errors=True)


def _before_workers() -> None:
    """As root, the embedded server's system user and the copy of its programs that user can
    reach are made once here, not by several workers at once (useradd of one name twice fails)."""
    if os.environ.get("DATABASE_URL") or os.environ.get("TICKQ_TEST_DOCKER") == "1":
        return
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        from tickq.db import embedded_install

        embedded_install.bin_dir()
