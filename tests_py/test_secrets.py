"""Secrets stay where they are: a command never sees tickq's connection settings, registry env
values reach the database only as digests (also in drift), and no timer file tickq writes or
prints holds a password. Real CLI, real PostgreSQL."""

from __future__ import annotations

import os
import plistlib
import stat
import subprocess
import sys
from pathlib import Path

import psycopg
from psycopg import conninfo

REPO = Path(__file__).resolve().parent.parent
PASSWORD = "s3cret-Pa55-word"  # the embedded test server trusts local sockets: any password works
API_KEY = "api-key-value-77"

REGISTRY = """\
[settings]
slots = 1
tick = "5m"

[kinds.printenv]
command = ["env"]
every = "1h"
timeout = "30s"
env = {{ API_KEY = "{key}" }}
"""


def tickq(*args: str, env: dict[str, str], cwd: Path | None = None) -> subprocess.CompletedProcess:
    full = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "TICKQ_REGISTRY")}
    full["PYTHONPATH"] = str(REPO / "python_runner")
    full.update(env)
    return subprocess.run([sys.executable, "-m", "tickq.cli", *args], env=full, cwd=cwd,
                          capture_output=True, text=True, timeout=120, check=False)


def with_password(url: str) -> str:
    return conninfo.make_conninfo(url, password=PASSWORD)


def test_a_command_never_sees_the_database_password_or_tickqs_settings(
    tmp_path: Path, db_url: str
) -> None:
    registry = tmp_path / "registry.toml"
    registry.write_text(REGISTRY.format(key=API_KEY))
    done = tickq("tick", "--registry", str(registry), env={
        "DATABASE_URL": with_password(db_url), "PGPASSWORD": PASSWORD, "PGUSER": "postgres",
        "TICKQ_DATA_DIR": str(tmp_path / "data"), "TICKQ_LOG_FORMAT": "text",
        "LC_TIME": "C", "SOME_OTHER_SETTING": "not for jobs",
    })
    assert done.returncode == 0, done.stderr
    with psycopg.connect(db_url) as conn:
        [tail] = conn.execute(
            "SELECT output_tail FROM tickq.job_run WHERE kind = 'printenv'").fetchone()
    names = {line.partition("=")[0] for line in tail.splitlines()}
    assert PASSWORD not in tail
    assert not {n for n in names if n.startswith("PG") or n == "DATABASE_URL"}, names
    assert not names & {"TICKQ_DATA_DIR", "TICKQ_LOG_FORMAT", "TICKQ_RUN_DIR", "SOME_OTHER_SETTING"}
    assert f"API_KEY={API_KEY}" in tail  # the registry's env does reach it
    assert {"PATH", "HOME", "LC_TIME", "TICKQ_KIND", "TICKQ_RUN_ID", "TICKQ_ATTEMPT"} <= names


def test_env_values_reach_the_database_and_the_drift_log_only_as_digests(
    tmp_path: Path, db_url: str
) -> None:
    registry = tmp_path / "registry.toml"
    registry.write_text(REGISTRY.format(key=API_KEY))
    first = tickq("sync", "--registry", str(registry), env={"DATABASE_URL": db_url})
    assert first.returncode == 0, first.stderr
    registry.write_text(REGISTRY.format(key="rotated-key-88"))
    second = tickq("sync", "--registry", str(registry), env={"DATABASE_URL": db_url})
    assert second.returncode == 0, second.stderr
    log = second.stdout + second.stderr
    assert "registry.drift" in log and "API_KEY" in log and "changed" in log
    assert API_KEY not in log and "rotated-key-88" not in log
    with psycopg.connect(db_url) as conn:
        # The JSON path of sync_registry (no Python in between) keeps digests too.
        conn.execute("SELECT tickq.sync_registry(%s::jsonb)", (
            '{"settings": {"slots": 1}, "kinds": {"raw": {"command": ["true"], "every": 60,'
            ' "timeout": 30, "env": {"TOKEN": "plain-json-secret"}}}}',))
        everything = conn.execute(
            "SELECT (SELECT string_agg(k.registry::text, ' ') FROM tickq.job_kind AS k)"
            " || (SELECT coalesce(string_agg(d::text, ' '), '') FROM tickq.drift AS d)"
        ).fetchone()[0]
    assert "API_KEY" in everything and "sha256:" in everything
    for secret in (API_KEY, "rotated-key-88", "plain-json-secret"):
        assert secret not in everything


TIMER_REGISTRY = """\
[settings]
tick = "5m"

[kinds.job]
command = ["true"]
every = "5m"
timeout = "1m"
"""


def test_timer_files_hold_no_password_and_the_passfile_is_private(tmp_path: Path) -> None:
    folder = tmp_path / "jobs"
    folder.mkdir()
    (folder / "registry.toml").write_text(TIMER_REGISTRY)
    url = f"postgresql://tickq:{PASSWORD}@db.example:5433/queue"
    env = {"HOME": str(tmp_path / "home"), "DATABASE_URL": url,
           "XDG_CONFIG_HOME": str(tmp_path / "home" / ".config")}
    printed = {}
    for timer in ("cron", "systemd", "launchd"):
        done = tickq(timer, "print", "--registry", str(folder / "registry.toml"), env=env)
        assert done.returncode == 0, done.stderr
        assert PASSWORD not in done.stdout and PASSWORD not in done.stderr
        printed[timer] = done.stdout
    plist = plistlib.loads(printed["launchd"].encode())["EnvironmentVariables"]
    passfile = Path(plist["PGPASSFILE"])
    assert "db.example" in plist["DATABASE_URL"] and "password" not in plist["DATABASE_URL"]
    assert f"PGPASSFILE={passfile}" in printed["cron"] or f"PGPASSFILE='{passfile}'" in (
        printed["cron"])
    assert f'"PGPASSFILE={passfile}"' in printed["systemd"]
    assert stat.S_IMODE(passfile.stat().st_mode) == 0o600
    assert stat.S_IMODE(passfile.parent.stat().st_mode) == 0o700
    assert passfile.read_text().splitlines() == [f"db.example:5433:queue:tickq:{PASSWORD}"]
    # libpq takes the password from the passfile: the stripped URL plus PGPASSFILE connect.
    params = conninfo.conninfo_to_dict(plist["DATABASE_URL"])
    assert "password" not in params and params["user"] == "tickq"


def test_the_upgrade_replaces_env_values_stored_before_by_digests(
    tmp_path: Path, empty_db_url: str
) -> None:
    from test_schema_upgrade import _sql_at

    # The last commit before env values were digested (migration 0013).
    old_sql = _sql_at("63b6c76", tmp_path / "before")
    registry = ('{"kinds": {"k": {"command": ["x"], "every": 60, "timeout": 30,'
                ' "env": {"TOKEN": "%s"}}}}')
    with psycopg.connect(empty_db_url, autocommit=True) as conn:
        from tickq import db

        db.migrate(conn, old_sql)
        conn.execute("SELECT tickq.sync_registry(%s::jsonb)", (registry % "old-secret-1",))
        conn.execute("SELECT tickq.sync_registry(%s::jsonb)", (registry % "old-secret-2",))
        conn.execute("SELECT tickq.sync_registry('{\"kinds\": {}}'::jsonb)")  # retired: drift
        before = conn.execute("SELECT (SELECT string_agg(d::text, ' ') FROM tickq.drift AS d)"
                              " || (SELECT registry::text FROM tickq.job_kind WHERE name = 'k')"
                              ).fetchone()[0]
        assert "old-secret-1" in before and "old-secret-2" in before
        # As docs/how-to/upgrade.md says: to the end of the old chain first, then the baseline.
        db.migrate(conn, _sql_at("412a04b", tmp_path / "last-chain"))
        db.migrate(conn)
        after = conn.execute("SELECT (SELECT string_agg(d::text, ' ') FROM tickq.drift AS d)"
                             " || (SELECT registry::text FROM tickq.job_kind WHERE name = 'k')"
                             ).fetchone()[0]
    assert "old-secret" not in after and "sha256:" in after


def test_python_and_sql_digest_an_env_value_alike(conn: psycopg.Connection) -> None:
    """Both sync paths must store the same digest, or every sync would report drift."""
    from tickq.registry import env_digest

    [sql] = conn.execute("SELECT tickq.env_digests('k.1', '{\"A_B\": \"v=1:é\"}') ->> 'A_B'"
                         ).fetchone()
    assert sql == env_digest("k.1", "A_B", "v=1:é")
