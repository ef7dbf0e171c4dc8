"""systemd timers and a launchd agent through the whole road in, as a person moving them would
take it: `legacy import --write` of two timer/service pairs and a plist of the corpora (files
as their repositories hold them: tests_py/data/legacy/*/SOURCE), then, in a copy-on-write copy
of this machine where each program they name is a recording shim (tests_py/cron_sandbox.py),
`tickq run` of each kind, `tickq legacy check` of the three files and `tickq check`.

Each run must call what systemd or launchd would start, in order, from the folder it would
start it in, with the variables the unit sets (systemd.exec(5), launchd.plist(5)):
- apt-daily: ExecStartPre=-/usr/lib/apt/apt-helper wait-online (its failure ignored: `-`),
  then ExecStart=/usr/lib/apt/apt.systemd.daily update; a system service runs in /, with
  systemd's PATH;
- pg_dump@15-main (an instance of a template, `%i` = 15-main): ExecStartPre=, then two
  ExecStart= lines, `$KEEP` from Environment="KEEP=3";
- com.selvansoft.purge: ProgramArguments /usr/sbin/purge, in /, with launchd's PATH.
Variables systemd sets that no unit file names (INVOCATION_ID, JOURNAL_STREAM, ...; for User=,
USER, LOGNAME, HOME and SHELL) are not compared: the readers' notes say how tickq runs."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
import uuid
from pathlib import Path

import psycopg
import pytest
from processes import tickq_env

from tickq import db

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "tests_py" / "data" / "legacy"
SYSTEMD_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
LAUNCHD_PATH = "/usr/bin:/bin:/usr/sbin:/sbin"
FILES = ["apt-daily/apt-daily.timer", "pg-dump/pg_dump@15-main.timer",
         "com.selvansoft.purge.plist"]
# kind: the calls its old system would make, in order: (argv, cwd, variables it sets)
EXPECTED = {
    "apt-daily": [
        (["/usr/lib/apt/apt-helper", "wait-online"], "/", {"PATH": SYSTEMD_PATH}),
        (["/usr/lib/apt/apt.systemd.daily", "update"], "/", {"PATH": SYSTEMD_PATH})],
    "pg_dump_15-main": [
        (["/usr/bin/pg_backupcluster", "15-main", "createdirectory"], "/",
         {"PATH": SYSTEMD_PATH, "KEEP": "3"}),
        (["/usr/bin/pg_backupcluster", "15-main", "dump"], "/",
         {"PATH": SYSTEMD_PATH, "KEEP": "3"}),
        (["/usr/bin/pg_backupcluster", "15-main", "expiredumps", "3"], "/",
         {"PATH": SYSTEMD_PATH, "KEEP": "3"})],
    "purge": [(["/usr/sbin/purge"], "/", {"PATH": LAUNCHD_PATH})],
}


@pytest.fixture(scope="module")
def moved(tmp_path_factory: pytest.TempPathFactory, pg_server_url: str,
          template_db: str) -> dict:
    if os.geteuid() != 0 or not shutil.which("unshare"):
        pytest.skip("the sandbox mounts an overlay root: it needs root and unshare(1)")
    name = f"t_{uuid.uuid4().hex}"
    url = db.create_database(pg_server_url, name, template=template_db)
    folder = tmp_path_factory.mktemp("units")
    old = folder / "old"
    for pair in ("apt-daily", "pg-dump"):
        shutil.copytree(DATA / "systemd" / pair, old / pair, symlinks=True)
    shutil.copy(DATA / "launchd" / "com.selvansoft.purge.plist", old)
    imported = subprocess.run(
        [sys.executable, "-m", "tickq.cli", "legacy", "import", *FILES, "--registry",
         str(folder / "registry.toml"), "--write", "--database-url", url],
        cwd=old, env=tickq_env(TZ="UTC"), capture_output=True, text=True, timeout=120)
    assert imported.returncode == 0, imported.stderr
    registry = tomllib.loads((folder / "registry.toml").read_text())
    scratch = folder / "sandbox"
    scratch.mkdir()
    host = psycopg.conninfo.conninfo_to_dict(url).get("host") or ""
    files = [str(old / f) for f in FILES]
    manifest = {
        "scratch": str(scratch), "keep": [host] if host.startswith("/") else [],
        "python": sys.executable, "recorder_python": os.path.realpath(sys.executable),
        "pythonpath": str(REPO / "python_runner"), "registry": str(folder / "registry.toml"),
        "database_url": url, "dirs": ["/"], "plain": [], "out": str(scratch / "out.json"),
        "shims": sorted({argv[0] for calls in EXPECTED.values() for argv, _, _ in calls}),
        "jobs": [{"id": kind, "kind": kind} for kind in EXPECTED],
        "after": [["legacy", "check", *files, "--registry", str(folder / "registry.toml")],
                  ["check", "--registry", str(folder / "registry.toml"), "--database-url",
                   url]],
    }
    (scratch / "manifest.json").write_text(json.dumps(manifest))
    ran = subprocess.run(
        ["unshare", "--mount", "--pid", "--fork", "--propagation", "private", sys.executable,
         str(REPO / "tests_py" / "cron_sandbox.py"), str(scratch / "manifest.json")],
        capture_output=True, text=True, timeout=600)
    assert ran.returncode == 0, ran.stderr[-3000:]
    yield {"registry": registry, "imported": imported,
           **json.loads((scratch / "out.json").read_text())}
    db.drop_database(pg_server_url, name)


def test_the_units_and_the_agent_become_kinds(moved: dict) -> None:
    kinds = moved["registry"]["kinds"]
    assert sorted(kinds) == sorted(EXPECTED)
    assert [s["name"] for s in kinds["apt-daily"]["steps"]] == ["start_pre", "start"]
    assert kinds["apt-daily"]["steps"][0]["continue_on_failure"] is True
    assert kinds["pg_dump_15-main"]["legacy"] == "pg_dump@15-main.timer"
    # a chain's timeout covers its steps'
    assert kinds["pg_dump_15-main"]["timeout"] == "3h"
    assert "left as it is" not in moved["imported"].stderr


@pytest.mark.parametrize("kind", sorted(EXPECTED))
def test_each_kind_calls_what_its_old_system_started(moved: dict, kind: str) -> None:
    ran = moved["jobs"][kind]
    assert ran["tickq_status"] == 0, ran["tickq_output"]
    calls = [(c["argv"], c["cwd"], dict(e.split("=", 1) for e in c["env"]))
             for c in ran["tickq"]]
    assert [(argv, cwd) for argv, cwd, _ in calls] == [
        (argv, cwd) for argv, cwd, _ in EXPECTED[kind]]
    for (_, _, env), (_, _, wanted) in zip(calls, EXPECTED[kind], strict=True):
        assert {k: env.get(k) for k in wanted} == wanted


def test_legacy_check_and_check_pass_for_the_moved_units(moved: dict) -> None:
    (legacy, out, err), (check, c_out, c_err) = moved["after"]
    assert legacy == 0, out + err
    assert "legacy parity holds: 3 kind(s)" in out
    assert check == 0, c_out + c_err
