"""`tickq launchd|systemd|cron print` end to end: the registry's tick and path reach the timer."""

from __future__ import annotations

import os
import plistlib
import re
import secrets
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

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


# ---------------------------------------------------------------- who runs it, with what PATH

SYSTEM_FOLDERS = ["/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"]
SHELL_ONLY = "/opt/only-in-this-shell/bin"  # in the installing shell's PATH, never in a timer's
THIS_BIN = str(Path(sys.executable).parent)  # where this tickq lives (the venv's bin)


@pytest.fixture(scope="module")
def account() -> Iterator[str]:
    """A system user of this test's own, removed afterwards."""
    name = f"tq-timer-{secrets.token_hex(3)}"
    subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin",
                    name], check=True, capture_output=True)
    try:
        yield name
    finally:
        subprocess.run(["userdel", name], check=False, capture_output=True)


@pytest.fixture
def project() -> Iterator[Path]:
    """A registry folder other users may pass (tmp_path's parents are root's, mode 0700)."""
    folder = Path(tempfile.mkdtemp(prefix="tq-timer-"))
    folder.chmod(0o755)
    (folder / "registry.toml").write_text(REGISTRY)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def as_shell(*args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """`tickq ARGS` from a shell whose PATH has a folder of its own first."""
    base = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "SUDO_USER")}
    return subprocess.run(
        [sys.executable, "-m", "tickq.cli", *args], cwd=cwd, capture_output=True, text=True,
        check=False, env={**base, "PATH": f"{SHELL_ONLY}:{os.environ['PATH']}", **env})


def units_of(printed: str) -> dict[str, str]:
    """{file name: text} of the units in `systemd print --system`'s output, each after a
    `# /etc/systemd/system/NAME` line."""
    parts = re.split(r"^# /etc/systemd/system/(\S+)\n", printed, flags=re.MULTILINE)
    return dict(zip(parts[1::2], parts[2::2]))


def service_of(printed: str) -> list[str]:
    (text,) = [t for name, t in units_of(printed).items() if name.endswith(".service")]
    return text.splitlines()


def unit_files(printed: str, folder: Path) -> list[Path]:
    paths = []
    for name, text in units_of(printed).items():
        paths.append(folder / name)
        paths[-1].write_text(text)
    assert len(paths) == 2, printed
    return paths


def test_a_system_unit_runs_as_the_user_named_with_a_path_of_its_own(
    account: str, project: Path, tmp_path: Path
) -> None:
    done = as_shell("systemd", "print", "--system", "--run-as", account, cwd=project)
    assert done.returncode == 0, done.stderr
    service = service_of(done.stdout)
    assert f"User={account}" in service
    (path,) = [line for line in service if line.startswith('Environment="PATH=')]
    assert path == f'Environment="PATH={":".join([THIS_BIN, *SYSTEM_FOLDERS])}"'
    assert SHELL_ONLY not in done.stdout
    verified = subprocess.run(["systemd-analyze", "verify", *map(str, unit_files(
        done.stdout, tmp_path))], capture_output=True, text=True, timeout=60)
    assert verified.returncode == 0, verified.stderr
    assert "tickq-" not in verified.stderr, verified.stderr


def test_as_root_a_system_unit_runs_as_root_only_when_asked_in_so_many_words(
    project: Path, account: str
) -> None:
    refused = as_shell("systemd", "print", "--system", cwd=project)
    assert refused.returncode == 2 and refused.stdout == ""
    assert len(refused.stderr.splitlines()) == 1, refused.stderr
    assert "--run-as USER" in refused.stderr and "--run-as root" in refused.stderr
    asked = as_shell("systemd", "print", "--system", "--run-as", "root", cwd=project)
    assert asked.returncode == 0, asked.stderr
    assert "User=root" in service_of(asked.stdout)
    # under sudo, the user who ran sudo
    sudo = as_shell("systemd", "print", "--system", cwd=project, SUDO_USER=account)
    assert sudo.returncode == 0, sudo.stderr
    assert f"User={account}" in service_of(sudo.stdout)


def test_a_unit_its_user_could_not_run_is_refused(account: str, project: Path,
                                                  tmp_path: Path) -> None:
    (tmp_path / "registry.toml").write_text(REGISTRY)  # under root's 0700 folders
    hidden = as_shell("systemd", "print", "--system", "--run-as", account, cwd=tmp_path)
    assert hidden.returncode == 2 and hidden.stdout == ""
    assert account in hidden.stderr and "0700" in hidden.stderr, hidden.stderr
    passfile = tmp_path / "pgpass"
    password = as_shell("systemd", "print", "--system", "--run-as", account, cwd=project,
                        DATABASE_URL="postgresql://tq:secret@db.example/tickq",
                        PGPASSFILE=str(passfile))
    assert password.returncode == 2 and "secret" not in password.stdout + password.stderr
    assert ".pgpass" in password.stderr and not passfile.exists()
    for bad in (["--system", "--run-as", "no-such-user-tq"], ["--run-as", account]):
        done = as_shell("systemd", "print", *bad, cwd=project)
        assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert "--system" in done.stderr  # --run-as without it: a user unit is its user's


def test_cron_and_launchd_get_the_same_path_not_the_shells(project: Path) -> None:
    wanted = ":".join([THIS_BIN, *SYSTEM_FOLDERS])
    cron = as_shell("cron", "print", cwd=project)
    assert cron.returncode == 0, cron.stderr
    assert f"PATH={wanted} " in cron.stdout and SHELL_ONLY not in cron.stdout
    launchd = as_shell("launchd", "print", cwd=project)
    assert launchd.returncode == 0, launchd.stderr
    assert plistlib.loads(launchd.stdout.encode())["EnvironmentVariables"]["PATH"] == wanted
