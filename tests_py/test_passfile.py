"""A timer's passfile for a multi-host DATABASE_URL: libpq matches a passfile line against the
host and the port it is trying, one at a time, so a line that holds the URL's list of ports
(`*:5432,5433:...`) never matches and the timer's tick fails with "no password supplied". Tried
against a real server that asks for a scram password, behind a first host that is down."""

from __future__ import annotations

import shutil
import socket
import tempfile
from pathlib import Path
from urllib.parse import quote

import psycopg
import pytest
from hosts_net import start_server, stop_server
from psycopg import sql
from test_secrets import tickq

from tickq.timers.environment import keep_password_out

ROLE, PASSWORD = "tq_timer", "s3cret:with\\odd chars"


def dead_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]  # closed again at once: nothing listens there


@pytest.fixture
def password_server():
    folder = Path(tempfile.mkdtemp(prefix="tq-pass-"))  # short, and the server's user passes it
    folder.chmod(0o711)
    server = start_server(folder, "127.0.0.1", "127.0.0.1/32")
    try:
        admin = f"postgresql://postgres@/postgres?host={server.socket_dir}&port={server.port}"
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(sql.SQL("CREATE ROLE {} LOGIN SUPERUSER PASSWORD {}").format(
                sql.Identifier(ROLE), sql.Literal(PASSWORD)))
            conn.execute(sql.SQL("CREATE DATABASE queue OWNER {}").format(sql.Identifier(ROLE)))
        yield server
    finally:
        stop_server(server)
        shutil.rmtree(folder, ignore_errors=True)


def test_a_multi_host_url_moved_to_the_passfile_still_logs_in(
    tmp_path: Path, password_server
) -> None:
    port = password_server.port
    url = (f"postgresql://{ROLE}:{quote(PASSWORD, safe='')}@127.0.0.1:{dead_port()},"
           f"127.0.0.1:{port}/queue?connect_timeout=5")
    environ = {"DATABASE_URL": url, "PGPASSFILE": str(tmp_path / "cfg" / "pgpass")}
    keep_password_out(environ)
    assert PASSWORD not in environ["DATABASE_URL"]

    registry = tmp_path / "registry.toml"
    registry.write_text('[kinds.job]\ncommand = ["true"]\nevery = "5m"\ntimeout = "1m"\n')
    done = tickq("sync", "--registry", str(registry), env=environ)
    assert done.returncode == 0, done.stdout + done.stderr
    assert PASSWORD not in done.stdout + done.stderr
