"""A project's queue survives a deploy, as many teams deploy: release folders behind a `current`
link (Capistrano, Deployer, CI deploys; a Nix profile link behaves the same), on the embedded
default and with DATABASE_URL, and two hosts that check the project out at different paths.
History, pauses and the project's record stay; a release that removes a kind retires it. Real
`tickq` processes, real servers; the second host is a UTS namespace with a host name of its own.
"""

from __future__ import annotations

import hashlib
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
from processes import tickq_env
from psycopg import conninfo

from tickq import db
from tickq.db import embedded

HOST = socket.gethostname()


def tickq(*args: str, data_dir: Path | None = None, cwd: Path | None = None,
          pwd: Path | None = None, host: str | None = None) -> subprocess.CompletedProcess[str]:
    """`tickq ARGS` run in `cwd` (the shell's PWD `pwd`), on the embedded server of `data_dir`,
    or on another host (a UTS namespace named `host`)."""
    env = tickq_env()
    if data_dir is not None:
        env["TICKQ_DATA_DIR"] = str(data_dir)
    if pwd is not None:
        env["PWD"] = str(pwd)
    argv = [sys.executable, "-m", "tickq.cli", *args]
    if host is not None:
        argv = ["unshare", "--uts", "sh", "-c", 'hostname "$0" && exec "$@"', host, *argv]
    return subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True, timeout=120)


def ok(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 0, (result.stdout, result.stderr)
    return result.stdout


def release(app: Path, name: str, kinds: list[str], project: str | None = None) -> Path:
    """A release folder of `app` holding a registry of `kinds`, made `current` (an atomic
    rename of a new link over the old, as deploy tools do)."""
    folder = app / "releases" / name
    folder.mkdir(parents=True)
    head = f'[settings]\nproject = "{project}"\n\n' if project else ""
    (folder / "registry.toml").write_text(head + "".join(textwrap.dedent(f"""\
        [kinds.{kind}]
        command = ["true"]
        every = "1h"
        timeout = "30s"

        """) for kind in kinds))
    link = app / f".current-{name}"
    link.symlink_to(folder)
    link.replace(app / "current")
    return app / "current" / "registry.toml"


def queue_url(registry: Path, data_dir: Path, **kw: Path) -> str:
    out = ok(tickq("server", "status", "--registry", str(registry), data_dir=data_dir, **kw))
    [line] = [ln for ln in out.splitlines() if ln.startswith("database URL: ")]
    return line.removeprefix("database URL: ")


def runs(kind: str, *args: str, **kw: Path) -> list[dict]:
    return json.loads(ok(tickq("history", kind, "--json", *args, **kw)))


# ---------------------------------------------------------------- the embedded default


@pytest.fixture(scope="module")
def data_dir() -> Iterator[Path]:
    """A data folder of its own, its embedded server started by the first command."""
    folder = Path(tempfile.mkdtemp(prefix="tickq-deploys-"))
    folder.chmod(0o711)  # as root, the server's own user must pass this folder of ours
    try:
        yield folder / "tickq"
    finally:
        embedded.stop_server(folder / "tickq" / "pg")
        shutil.rmtree(folder, ignore_errors=True)


def test_a_current_link_keeps_the_queue_across_releases_on_the_embedded_server(
    data_dir: Path, tmp_path: Path
) -> None:
    app = tmp_path / "srv" / "app"
    registry = release(app, "20261201120000", ["report", "cleanup"])
    ok(tickq("run", "report", "--registry", str(registry), data_dir=data_dir))
    ok(tickq("pause", "cleanup", "--reason", "vendor down", "--registry", str(registry),
             data_dir=data_dir))
    first = queue_url(registry, data_dir)

    # The next release removes `report`'s sibling and keeps `report`; the timer ticks through
    # `current` as before.
    release(app, "20261202120000", ["report"])
    ok(tickq("tick", "--registry", str(registry), data_dir=data_dir))
    assert queue_url(registry, data_dir) == first
    assert [r["outcome"] for r in runs("report", "--registry", str(registry),
                                       data_dir=data_dir)] == ["ok"]
    retired = ok(tickq("status", "--retired", "--registry", str(registry), data_dir=data_dir))
    assert "cleanup" in retired, retired

    # A person in the release folder, through the link (PWD) or not, reads the same queue.
    current = app / "current"
    assert queue_url(Path("registry.toml"), data_dir, cwd=current, pwd=current) == first
    real = app / "releases" / "20261202120000"
    assert queue_url(Path("registry.toml"), data_dir, cwd=real) == first


def test_a_queue_named_by_the_old_rule_is_found_and_kept_after_the_next_deploy(
    data_dir: Path, tmp_path: Path
) -> None:
    app = tmp_path / "srv" / "shop"
    registry = release(app, "r1", ["invoice", "ship"])
    # The queue a tickq before this made for the release folder: named by the folder with the
    # link followed, the registry recorded by that path.
    server = embedded.ensure_server(data_dir / "pg")
    real = (app / "releases" / "r1").resolve()
    old = f"tickq_r1_{hashlib.sha256(str(real).encode()).hexdigest()[:10]}"
    url = db.create_database(server, old)
    ok(tickq("run", "invoice", "--registry", str(real / "registry.toml"), "--database-url", url))

    # Through `current`, then two deploys: the first after a restart of the server (its
    # remembered choices forgotten), the second while it runs.
    for name, restart in (("r2", False), ("r3", True), (None, False)):
        if restart:
            ok(tickq("server", "stop", "--registry", str(registry), data_dir=data_dir))
        ok(tickq("tick", "--registry", str(registry), data_dir=data_dir))
        got = queue_url(registry, data_dir)
        assert conninfo.conninfo_to_dict(got)["dbname"] == old, (name, got)
        if name:
            release(app, name, ["invoice", "ship"])
    assert [r["outcome"] for r in runs("invoice", "--registry", str(registry),
                                       data_dir=data_dir)] == ["ok"]


def test_server_stop_says_whose_queues_stop_with_it(data_dir: Path, tmp_path: Path) -> None:
    # One embedded server per OS user (as root: every root project's, in /var/lib/tickq).
    alpha = release(tmp_path / "alpha", "r1", ["a1"])
    beta = release(tmp_path / "beta", "r1", ["b1"])
    for registry in (alpha, beta):
        ok(tickq("sync", "--registry", str(registry), data_dir=data_dir))
    names = [conninfo.conninfo_to_dict(queue_url(r, data_dir))["dbname"] for r in (alpha, beta)]
    served = ok(tickq("server", "status", "--registry", str(alpha), data_dir=data_dir))
    assert f"{names[0]} (this project's)" in served and names[1] in served, served
    stopped = ok(tickq("server", "stop", "--registry", str(alpha), data_dir=data_dir))
    assert stopped.startswith("stopped pid "), stopped
    assert f"{names[0]} (this project's)" in stopped and f"{names[1]}" in stopped, stopped
    assert "until a command of its project" in stopped and "scratch" not in stopped, stopped
    ok(tickq("status", "--registry", str(beta), data_dir=data_dir))  # which starts it again


# ---------------------------------------------------------------- DATABASE_URL


def test_a_current_link_keeps_the_queue_with_a_database_url(db_url: str, tmp_path: Path) -> None:
    app = tmp_path / "srv" / "app"
    registry = release(app, "r1", ["report", "cleanup"])
    url = ["--registry", str(registry), "--database-url", db_url]
    ok(tickq("run", "report", *url))
    release(app, "r2", ["report"])  # removes a kind
    for command in ("tick", "sync", "tick"):
        ok(tickq(command, *url))
    assert [r["outcome"] for r in runs("report", *url)] == ["ok"]
    with psycopg.connect(db_url) as conn:
        assert conn.execute("SELECT name FROM tickq.job_kind WHERE retired_at IS NOT NULL"
                            ).fetchall() == [("cleanup",)]
        assert conn.execute("SELECT path, resolved FROM tickq.queue_registry").fetchone() == (
            str(registry), str((app / "releases" / "r2" / "registry.toml").resolve()))


def test_two_hosts_with_other_checkout_paths_are_one_project_by_its_name(
    db_url: str, tmp_path: Path
) -> None:
    here = release(tmp_path / "home" / "ana" / "src" / "billing", "r1", ["a", "b"], "billing")
    there = release(tmp_path / "opt" / "billing-app", "r9", ["a"], "billing")
    ok(tickq("sync", "--registry", str(here), "--database-url", db_url))
    ok(tickq("tick", "--registry", str(there), "--database-url", db_url, host="host-two"))
    with psycopg.connect(db_url) as conn:
        assert conn.execute("SELECT path, host, project FROM tickq.queue_registry").fetchone() == (
            str(there), "host-two", "billing")
        assert conn.execute("SELECT name FROM tickq.job_kind WHERE retired_at IS NOT NULL"
                            ).fetchall() == [("b",)]

    # Without a name, another path on another host is another project: refused, saying how to
    # make them one.
    unnamed = release(tmp_path / "srv" / "other", "r1", ["c"])
    refused = tickq("sync", "--registry", str(unnamed), "--database-url", db_url, host="host-3")
    assert refused.returncode == 2, (refused.stdout, refused.stderr)
    [line] = refused.stderr.splitlines()
    assert "(project billing) on host host-two" in line and "on host host-3" in line, line
    assert 'project = "NAME" in [settings]' in line and "--replace-queue" in line, line


def test_a_project_name_is_judged_by_the_database(db_url: str, tmp_path: Path) -> None:
    registry = release(tmp_path / "app", "r1", ["a"], "Billing App")
    refused = tickq("sync", "--registry", str(registry), "--database-url", db_url)
    assert refused.returncode == 2, (refused.stdout, refused.stderr)
    assert 'key "settings.project": a project name is 1-63 characters' in refused.stderr
    assert os.path.islink(tmp_path / "app" / "current")


def test_a_registry_of_another_project_with_a_bad_value_hears_of_both_at_once(
    db_url: str, tmp_path: Path
) -> None:
    # Synced from one file; another file of the same folder has an invalid value and would
    # retire a kind: each command names the value (the file's own problem) and the queue.
    (tmp_path / "registry.toml").write_text(
        '[kinds.a]\ncommand = ["true"]\nevery = "1h"\ntimeout = "30s"\n'
        '[kinds.b]\ncommand = ["true"]\nevery = "1h"\ntimeout = "30s"\n')
    other = tmp_path / "other.toml"
    other.write_text('[kinds.a]\ncommand = ["true"]\nevery = "0s"\ntimeout = "30s"\n')
    ok(tickq("sync", "--registry", str(tmp_path / "registry.toml"), "--database-url", db_url))
    for command in (["sync"], ["tick"], ["run", "a"]):
        refused = tickq(*command, "--registry", str(other), "--database-url", db_url)
        assert refused.returncode == 2, (command, refused.stdout, refused.stderr)
        lines = refused.stderr.splitlines()
        assert f'{other}: kind "a", key "every": must be a duration from 1s' in lines[0], lines
        assert any("this queue was last synced by registry" in ln for ln in lines), lines
        assert lines[-1] == "tickq: invalid registry: 2 problem(s)", lines


# ---------------------------------------------------------------- whose queue `status` reads


def test_status_names_the_database_and_registry_and_warns_of_another_projects_queue(
    db_url: str, tmp_path: Path
) -> None:
    alpha = release(tmp_path / "alpha", "r1", ["a1"])
    beta = release(tmp_path / "beta", "r1", ["b1"])
    ok(tickq("sync", "--registry", str(alpha), "--database-url", db_url))
    dbname = conninfo.conninfo_to_dict(db_url)["dbname"]

    mine = ok(tickq("status", "--registry", str(alpha), "--database-url", db_url)).splitlines()
    assert mine[-1].startswith(f"queue: database {dbname} on "), mine
    assert mine[-1].endswith(f", synced by {alpha}"), mine
    assert not any(ln.startswith("WARNING") for ln in mine), mine

    theirs = ok(tickq("status", "--registry", str(beta), "--database-url", db_url)).splitlines()
    assert theirs[0].startswith(f"WARNING another project's queue: database {dbname} "), theirs
    assert f"last synced by {alpha} on host {HOST}, not by {beta}" in theirs[0], theirs
    doc = json.loads(ok(tickq("status", "--json", "--registry", str(beta), "--database-url",
                              db_url)))["queue"]
    assert (doc["database"], doc["synced_by"]["path"], doc["this_project"]) == (
        dbname, str(alpha), False), doc
    assert "password" not in json.dumps(doc)
    check = tickq("status", "--check", "--registry", str(beta), "--database-url", db_url)
    assert check.returncode == 1 and "PROBLEM queue: database" in check.stdout, check.stdout
