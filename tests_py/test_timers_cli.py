"""`tickq launchd|systemd|cron print` end to end: the registry's tick and path reach the timer."""

from __future__ import annotations

import plistlib
import subprocess
import sys
from pathlib import Path

REGISTRY = """
[settings]
tick = "2m"

[kinds.job]
command = ["bin/job"]
every = "2m"
timeout = "1m"
"""


def tickq(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tickq.cli", *args], cwd=cwd, capture_output=True, text=True,
        check=False,
    )


def test_launchd_print_is_a_plist_for_this_registry(tmp_path: Path) -> None:
    folder = tmp_path / "Nightly Jobs"
    folder.mkdir()
    (folder / "registry.toml").write_text(REGISTRY)
    done = tickq("launchd", "print", "--registry", str(folder / "registry.toml"), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    plist = plistlib.loads(done.stdout.encode())
    assert plist["Label"] == "dev.tickq.nightly-jobs"
    assert plist["StartCalendarInterval"] == [{"Minute": m} for m in range(0, 60, 2)]
    assert Path(plist["ProgramArguments"][0]).is_absolute()
    assert plist["ProgramArguments"][-1] == "tick"
    assert plist["WorkingDirectory"] == str(folder.resolve())
    registry = str(folder.resolve() / "registry.toml")
    assert plist["EnvironmentVariables"]["TICKQ_REGISTRY"] == registry
    assert plist["RunAtLoad"] is True


def test_cron_print_and_linux_refuses_launchd_install(tmp_path: Path) -> None:
    (tmp_path / "registry.toml").write_text(REGISTRY)
    done = tickq("cron", "print", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("*/2 * * * * cd ")
    assert "TICKQ_REGISTRY=" in done.stdout and done.stdout.rstrip().endswith("2>&1")
    if sys.platform != "darwin":
        refused = tickq("launchd", "install", cwd=tmp_path)
        assert refused.returncode == 2
        assert "launchd" in refused.stderr and "Traceback" not in refused.stderr
