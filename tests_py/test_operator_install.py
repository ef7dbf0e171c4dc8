"""Installing tickq on a host: systemd timers without a user bus, launchd advice on Linux,
`--version`, and shell completion."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from dispatcher_cli import (
    cli_env,
    write_registry,
)

# ---------------------------------------------------------------- timers without a bus


def test_systemd_install_without_a_user_bus_says_what_to_do_and_writes_nothing(
    tmp_path: Path,
) -> None:
    registry = write_registry(tmp_path, {"a": {
        "command": ["true"], "every": "1h", "timeout": "30s"}})
    home = tmp_path / "home"
    home.mkdir()
    # No user manager can be reached at these addresses, whatever runs on this machine.
    env = {**cli_env(), "HOME": str(home), "XDG_RUNTIME_DIR": str(tmp_path / "no-runtime"),
           "DBUS_SESSION_BUS_ADDRESS": f"unix:path={tmp_path / 'no-bus'}"}

    def tickq_systemd(action: str) -> subprocess.CompletedProcess[str]:
        argv = [sys.executable, "-m", "tickq.cli", "systemd", action, "--name", "t",
                "--registry", str(registry)]
        return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60)

    done = tickq_systemd("install")

    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("tickq: no systemd user manager to talk to")
    assert "tickq cron print" in done.stderr
    assert ("--system" if os.geteuid() == 0 else "loginctl enable-linger") in done.stderr
    assert list(home.rglob("*")) == [], "nothing written"

    # Files left by an earlier install are removed even though systemd cannot be told.
    units = home / ".config" / "systemd" / "user"
    units.mkdir(parents=True)
    for suffix in ("service", "timer"):
        (units / f"tickq-t.{suffix}").write_text("")
    removed = tickq_systemd("uninstall")
    assert (removed.returncode, removed.stdout) == (0, "removed\n"), removed.stderr
    assert list(units.iterdir()) == []


def test_version_and_launchd_advice_on_linux_name_commands(tmp_path: Path) -> None:
    version = subprocess.run([sys.executable, "-m", "tickq.cli", "--version"], env=cli_env(),
                             capture_output=True, text=True, timeout=30)
    assert version.returncode == 0 and version.stdout.startswith("tickq 0."), version
    if sys.platform.startswith("linux"):
        registry = write_registry(tmp_path, {"a": {
            "command": ["true"], "every": "1h", "timeout": "30s"}})
        done = subprocess.run([sys.executable, "-m", "tickq.cli", "launchd", "install",
                               "--registry", str(registry)], env=cli_env(),
                              capture_output=True, text=True, timeout=30)
        assert done.returncode == 2
        assert "`tickq systemd install`" in done.stderr and "`tickq cron print`" in done.stderr
        assert "_install" not in done.stderr and "crontab_line" not in done.stderr


# ---------------------------------------------------------------- shell completion


def test_bash_completion_offers_commands_options_actions_and_kind_names(tmp_path: Path) -> None:
    registry = write_registry(tmp_path, {
        name: {"command": ["true"], "every": "1h", "timeout": "30s"}
        for name in ("send_email", "sweep")
    })
    script = subprocess.run([sys.executable, "-m", "tickq.cli", "completion", "bash"],
                            env=cli_env(), capture_output=True, text=True, timeout=30)
    assert script.returncode == 0, script.stderr
    (tmp_path / "completion.bash").write_text(script.stdout)
    probe = (
        "source completion.bash\n"
        'for line in "tickq sta" "tickq status --w" "tickq systemd in" "tickq run s" '
        f'"tickq pause --registry {registry} se"; do\n'
        '  COMP_WORDS=($line); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _tickq\n'
        '  echo "${COMPREPLY[*]}"\n'
        "done\n"
    )
    done = subprocess.run(["bash", "-c", probe], cwd=tmp_path, env=cli_env(),
                          capture_output=True, text=True, timeout=60)

    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "status", "--wide --watch", "install", "send_email sweep", "send_email"]
    zsh = subprocess.run([sys.executable, "-m", "tickq.cli", "completion", "zsh"],
                         env=cli_env(), capture_output=True, text=True, timeout=30)
    assert "bashcompinit" in zsh.stdout and "complete -o default -F _tickq tickq" in zsh.stdout
