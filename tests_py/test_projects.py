"""Projects are kept apart: one embedded database per registry folder; a queue remembers the
registry that last synced it, and a sync from another registry that would retire kinds is
refused (exit 2, naming both, and the flag that means "replace it"); a retired kind is a
WARNING of its own, leaves `status`, and can be listed and forgotten on purpose. Real
PostgreSQL servers and real `tickq` processes."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from psycopg import conninfo

from tickq import db
from tickq.db import embedded

REPO = Path(__file__).resolve().parent.parent
HOST = socket.gethostname()


def _env(data_dir: Path | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("DATABASE_URL", "TICKQ_REGISTRY", "TICKQ_LOG_FORMAT", "COLUMNS")}
    env["PYTHONPATH"] = str(REPO / "python_runner")
    if data_dir is not None:
        env["TICKQ_DATA_DIR"] = str(data_dir)
    return env


def tickq(*args: str, data_dir: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tickq.cli", *args], env=_env(data_dir),
                          capture_output=True, text=True, timeout=120)


def project(parent: Path, name: str, kinds: list[str]) -> Path:
    folder = parent / name
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "registry.toml"
    path.write_text("".join(textwrap.dedent(f"""\
        [kinds.{kind}]
        command = ["true"]
        every = "1h"
        timeout = "30s"

        """) for kind in kinds))
    return path


def ok(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 0, (result.stdout, result.stderr)
    return result.stdout


def live_kinds(url: str) -> set[str]:
    with db.connect(url) as conn:
        rows = conn.execute("SELECT name FROM tickq.job_kind WHERE retired_at IS NULL"
                            " AND name NOT LIKE 'tickq.%'").fetchall()
    return {name for (name,) in rows}


def database_of(server_status: str) -> str:
    [line] = [ln for ln in server_status.splitlines() if ln.startswith("database URL: ")]
    return line.removeprefix("database URL: ")


# ---------------------------------------------------------------- the embedded server


@pytest.fixture(scope="module")
def data_dir() -> Iterator[Path]:
    """A data folder of its own, its embedded server started by the first command."""
    folder = Path(tempfile.mkdtemp(prefix="tickq-projects-"))
    folder.chmod(0o711)  # as root, the server's own user must pass this folder of ours
    try:
        yield folder / "tickq"
    finally:
        embedded.stop_server(folder / "tickq" / "pg")
        shutil.rmtree(folder, ignore_errors=True)


def kinds_in(status: str) -> set[str]:
    """The kinds of `tickq status`'s table (its rows' first column, between the rule under the
    header and the summary): a temporary folder's random name in the summary must not count."""
    lines = status.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("---"))
    rows = []
    for line in lines[start + 1:]:
        if not line.strip() or line.startswith(("slots:", "queue:")):
            break
        rows.append(line.split()[0])
    return set(rows)


def test_two_project_folders_on_the_embedded_server_keep_their_own_queues(
    data_dir: Path, tmp_path: Path
) -> None:
    a = project(tmp_path, "alpha", ["a1", "a2"])
    b = project(tmp_path, "beta", ["b1"])
    ok(tickq("sync", "--registry", str(a), data_dir=data_dir))
    ok(tickq("sync", "--registry", str(b), data_dir=data_dir))

    # Each project's status shows its own kinds only: the second sync retired nothing of the first.
    status_a = ok(tickq("status", "--registry", str(a), data_dir=data_dir))
    status_b = ok(tickq("status", "--registry", str(b), data_dir=data_dir))
    assert kinds_in(status_a) == {"a1", "a2", "tickq.housekeeping"}, status_a
    assert kinds_in(status_b) == {"b1", "tickq.housekeeping"}, status_b

    # `server status` prints this project's queue, a database of its own.
    url_a = database_of(ok(tickq("server", "status", "--registry", str(a), data_dir=data_dir)))
    url_b = database_of(ok(tickq("server", "status", "--registry", str(b), data_dir=data_dir)))
    name_a = conninfo.conninfo_to_dict(url_a)["dbname"]
    name_b = conninfo.conninfo_to_dict(url_b)["dbname"]
    assert name_a != name_b
    assert "alpha" in name_a and "beta" in name_b
    assert len(name_a.encode()) <= 63
    assert live_kinds(url_a) == {"a1", "a2"} and live_kinds(url_b) == {"b1"}

    # The same folder reached another way (a relative path, a symlink) is the same project.
    link = tmp_path / "alpha-link"
    link.symlink_to(a.parent)
    url_link = database_of(ok(tickq("server", "status", "--registry",
                                    str(link / "registry.toml"), data_dir=data_dir)))
    assert url_link == url_a

    # A folder whose name is no identifier still gets a valid, bounded database name.
    odd = project(tmp_path, "Ünïcode proj-" + "x" * 80, ["o1"])
    ok(tickq("sync", "--registry", str(odd), data_dir=data_dir))
    url_odd = database_of(ok(tickq("server", "status", "--registry", str(odd),
                                   data_dir=data_dir)))
    assert len(conninfo.conninfo_to_dict(url_odd)["dbname"].encode()) <= 63
    assert live_kinds(url_odd) == {"o1"}


def test_the_old_shared_queue_stays_with_the_project_that_last_synced_it(
    data_dir: Path, tmp_path: Path
) -> None:
    # A queue from before: the shared database "tickq" that one project synced.
    server = embedded.ensure_server(data_dir / "pg")
    db.drop_database(server, "tickq")
    shared = db.create_database(server, "tickq")
    old = project(tmp_path, "old", ["o1", "o2"])
    other = project(tmp_path, "other", ["x1"])
    ok(tickq("sync", "--registry", str(old), "--database-url", shared))
    # As a queue synced by a tickq that recorded no registry.
    with db.connect(shared) as conn:
        conn.execute("DELETE FROM tickq.queue_registry")
    try:
        # The project whose kinds it holds keeps using it; another gets a queue of its own.
        url_old = database_of(ok(tickq("server", "status", "--registry", str(old),
                                       data_dir=data_dir)))
        assert conninfo.conninfo_to_dict(url_old)["dbname"] == "tickq"
        ok(tickq("sync", "--registry", str(other), data_dir=data_dir))
        assert live_kinds(shared) == {"o1", "o2"}
        ok(tickq("sync", "--registry", str(old), data_dir=data_dir))
        assert "o1" in ok(tickq("status", "--registry", str(old), data_dir=data_dir))
        with db.connect(shared) as conn:
            assert conn.execute("SELECT path FROM tickq.queue_registry").fetchone() == (
                str(old.resolve()),)
        url_other = database_of(ok(tickq("server", "status", "--registry", str(other),
                                         data_dir=data_dir)))
        assert conninfo.conninfo_to_dict(url_other)["dbname"] != "tickq"
        assert live_kinds(url_other) == {"x1"}
    finally:
        db.drop_database(server, "tickq")


# ---------------------------------------------------------------- one queue, two registries


def test_a_sync_from_another_registry_that_would_retire_kinds_is_refused(
    db_url: str, tmp_path: Path
) -> None:
    a = project(tmp_path, "alpha", ["a1", "a2"])
    b = project(tmp_path, "beta", ["b1"])
    ok(tickq("sync", "--registry", str(a), "--database-url", db_url))
    for command in (["sync"], ["tick"], ["run", "b1"]):
        refused = tickq(*command, "--registry", str(b), "--database-url", db_url)
        assert refused.returncode == 2, (command, refused.stdout, refused.stderr)
        lines = [ln for ln in refused.stderr.splitlines() if ln.strip()]
        assert len(lines) == 1, refused.stderr
        assert "Traceback" not in refused.stderr
        line = lines[0]
        assert str(a.resolve()) in line and str(b.resolve()) in line, line
        assert HOST in line and "--replace-queue" in line, line
        assert live_kinds(db_url) == {"a1", "a2"}

    # "Yes, replace it": the flag, on any of the three.
    replaced = tickq("tick", "--replace-queue", "--registry", str(b), "--database-url", db_url,
                     "--log-format", "json")
    ok(replaced)
    assert live_kinds(db_url) == {"b1"}
    events = [json.loads(ln) for ln in replaced.stdout.splitlines() if ln.startswith("{")]
    retired = sorted(e["kind"] for e in events if e["event"] == "kind.retired")
    assert retired == ["a1", "a2"], events
    assert {e["level"] for e in events if e["event"] == "kind.retired"} == {"warning"}
    with db.connect(db_url) as conn:
        assert conn.execute("SELECT path, host FROM tickq.queue_registry").fetchone() == (
            str(b.resolve()), HOST)

    # Another registry that retires nothing is welcome, and becomes the one of record.
    c = project(tmp_path, "gamma", ["b1", "c1"])
    ok(tickq("sync", "--registry", str(c), "--database-url", db_url))
    assert live_kinds(db_url) == {"b1", "c1"}
    with db.connect(db_url) as conn:
        assert conn.execute("SELECT path FROM tickq.queue_registry").fetchone() == (
            str(c.resolve()),)
    # `run` takes the flag too.
    ok(tickq("run", "b1", "--replace-queue", "--registry", str(b), "--database-url", db_url))
    assert live_kinds(db_url) == {"b1"}


def test_the_first_sync_of_an_empty_queue_and_edits_of_its_own_registry_are_fine(
    db_url: str, tmp_path: Path
) -> None:
    a = project(tmp_path, "alpha", ["a1", "a2"])
    ok(tickq("sync", "--registry", str(a), "--database-url", db_url))
    project(tmp_path, "alpha", ["a1"])  # the same file, a kind removed
    ok(tickq("sync", "--registry", str(a), "--database-url", db_url))
    assert live_kinds(db_url) == {"a1"}


def test_a_sync_without_a_registry_path_changes_nothing_of_the_record(
    conn: psycopg.Connection,
) -> None:
    # A script's JSON (no "source"): synced as before, the queue's record left as it was.
    conn.execute("SELECT * FROM tickq.sync_registry(%s::jsonb)", [json.dumps(
        {"kinds": {"k": {"command": ["true"], "every": 60, "timeout": 10}}})])
    assert conn.execute("SELECT count(*) FROM tickq.queue_registry WHERE path IS NOT NULL"
                        ).fetchone() == (0,)


# ---------------------------------------------------------------- retired kinds


def test_a_retired_kind_is_a_warning_leaves_status_and_can_be_listed_and_forgotten(
    db_url: str, tmp_path: Path
) -> None:
    a = project(tmp_path, "alpha", ["keep_me", "drop_me"])
    url = ["--registry", str(a), "--database-url", db_url]
    ok(tickq("run", "drop_me", *url))
    ok(tickq("run", "keep_me", *url))
    project(tmp_path, "alpha", ["keep_me"])
    synced = tickq("sync", *url)
    ok(synced)
    [line] = [ln for ln in synced.stdout.splitlines() if "kind.retired" in ln]
    assert " WARNING kind.retired " in line and "kind=drop_me" in line, synced.stdout

    status = ok(tickq("status", *url))
    assert "keep_me" in status and "drop_me" not in status, status
    as_json = json.loads(ok(tickq("status", "--json", *url)))
    assert [k["kind"] for k in as_json["kinds"] if k["kind"] == "drop_me"] == []

    retired = ok(tickq("status", "--retired", *url))
    assert "drop_me" in retired and "keep_me" not in retired, retired

    # Forget: only a retired kind, one line each way.
    live = tickq("forget", "keep_me", *url)
    assert live.returncode == 2, (live.stdout, live.stderr)
    assert len(live.stderr.strip().splitlines()) == 1 and "not retired" in live.stderr
    unknown = tickq("forget", "nothing_here", *url)
    assert unknown.returncode == 1 and len(unknown.stderr.strip().splitlines()) == 1
    forgot = tickq("forget", "drop_me", *url)
    out = ok(forgot)
    assert len(out.strip().splitlines()) == 1 and "drop_me" in out, out
    with db.connect(db_url) as conn:
        assert conn.execute("SELECT count(*) FROM tickq.job_kind WHERE name = 'drop_me'"
                            ).fetchone() == (0,)
        assert conn.execute("SELECT count(*) FROM tickq.job_run WHERE kind = 'drop_me'"
                            ).fetchone() == (0,)
        assert conn.execute("SELECT count(*) FROM tickq.job_run WHERE kind = 'keep_me'"
                            ).fetchone() == (1,)
    assert "drop_me" not in ok(tickq("status", "--retired", *url))
