"""`tickq legacy import --write` against hostile files: a symlink out of its folder, a file that
is no script, a 10 MB line, NUL bytes and values past the registry's bounds. Real `tickq`
subprocesses and a real PostgreSQL; what import writes is then synced by `tickq sync`."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PASSWD = ("root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n"
          "bin:x:2:2:bin:/bin:/usr/sbin/nologin\n")


def tickq(*args: str, cwd: Path | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items()
           if k not in ("DATABASE_URL", "TICKQ_REGISTRY", "TICKQ_LOG_FORMAT")}
    env["PYTHONPATH"] = str(REPO / "python_runner")
    return subprocess.run([sys.executable, "-m", "tickq.cli", *args], env=env, cwd=cwd,
                          capture_output=True, timeout=timeout)


def one_line(result: subprocess.CompletedProcess) -> str:
    err = result.stderr.decode()
    assert result.returncode == 2, (result.returncode, err)
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    return lines[0]


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "bin").mkdir()
    for name in ("ingest", "report"):
        (tmp_path / "bin" / name).write_text("#!/bin/sh\necho ok\n")
        (tmp_path / "bin" / name).chmod(0o755)
    (tmp_path / "registry.toml").write_text("[settings]\nslots = 2\n")
    return tmp_path


def test_a_symlink_out_of_its_folder_is_not_written_through(folder: Path, db_url: str) -> None:
    elsewhere = folder / "etc"
    elsewhere.mkdir()
    target = elsewhere / "passwd"
    target.write_text("bin/ingest\nbin/report\n")
    old = folder / "old.sh"
    old.symlink_to(target)
    line = one_line(tickq("legacy", "import", str(old), "--registry", "registry.toml",
                          "--write", "--database-url", db_url, cwd=folder))
    assert "link" in line and str(target) in line, line
    assert target.read_text() == "bin/ingest\nbin/report\n" and old.is_symlink()
    assert (folder / "registry.toml").read_text() == "[settings]\nslots = 2\n"


def test_a_file_that_is_no_script_or_crontab_is_refused_naming_the_line(
    folder: Path, db_url: str
) -> None:
    old = folder / "old.sh"
    old.write_text(PASSWD)
    line = one_line(tickq("legacy", "import", str(old), "--registry", "registry.toml",
                          "--write", "--database-url", db_url, cwd=folder))
    assert f"{old}: line 1:" in line and "not a crontab, a shell script of commands" in line, line
    assert old.read_text() == PASSWD


def test_a_10_mb_line_is_answered_in_one_line_and_the_rest_is_read(
    folder: Path, db_url: str
) -> None:
    old = folder / "old.sh"
    old.write_text("#!/bin/sh\nbin/ingest\nbin/report '" + "x" * (10 << 20) + "'\n")
    result = tickq("legacy", "import", str(old), "--registry", "registry.toml", "--write",
                   "--database-url", db_url, cwd=folder, timeout=60)
    err = result.stderr.decode()
    assert result.returncode == 0, err
    [long] = [line for line in err.splitlines() if ":3:" in line]
    assert "left as it is" in long and "longer than" in long and len(long) < 300, long[:300]
    assert "ingest" in (folder / "registry.toml").read_text()


def test_lines_the_registry_would_refuse_are_refused_and_sync_takes_what_was_written(
    folder: Path, db_url: str
) -> None:
    old = folder / "old.sh"
    text = "#!/bin/sh\nbin/ingest\ntimeout 99d bin/report\nbin/report a\x00b\n"
    old.write_bytes(text.encode())
    result = tickq("legacy", "import", str(old), "--registry", "registry.toml", "--write",
                   "--database-url", db_url, cwd=folder)
    err = result.stderr.decode()
    assert result.returncode == 0, err
    assert f"{old}:3: left as it is:" in err and "timeout" in err, err
    assert f"{old}:4: left as it is:" in err, err
    lines = old.read_bytes().decode().split("\n")
    assert lines[1].startswith("#tickq:ingest# ")
    assert lines[2] == "timeout 99d bin/report" and lines[3] == "bin/report a\x00b"
    synced = tickq("sync", "--registry", "registry.toml", "--database-url", db_url, cwd=folder)
    assert synced.returncode == 0, synced.stderr.decode()
