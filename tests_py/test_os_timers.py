"""tickq.timers: the files and argv lists that make an OS timer wake `tickq tick` (systemd's
units: test_os_timers_systemd.py).

Everything here is pure except the crontab line, run for real by /bin/sh (after cron's own `%`
processing)."""

from __future__ import annotations

import json
import os
import plistlib
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tickq.timers import common, cron, launchd, systemd
from tickq.timers.common import TimerError
from tickq.timers.environment import timer_environment

REPO = Path(__file__).resolve().parent.parent
TEMPLATE = REPO / "launchd" / "tickq.plist.template"

TICKQ = "/opt/tickq/bin/tickq"
ODD_ARG = '50% of $HOME and "quotes" \\ back\tslash'  # for every quoting there is
ENV = {
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "TICKQ_REGISTRY": "/srv/my jobs/registry.toml",
    "DATABASE_URL": "postgresql://u:p%40ss@db/tickq",
}


def plist_kwargs(**over):
    kw = dict(
        label="dev.tickq.tick",
        program_arguments=[TICKQ, "tick"],
        interval_seconds=300,
        working_directory=Path("/srv/my jobs"),
        stdout_path=Path("/Users/me/Library/Logs/tickq/dev.tickq.tick.log"),
        stderr_path=Path("/Users/me/Library/Logs/tickq/dev.tickq.tick.err.log"),
        environment=ENV,
    )
    kw.update(over)
    return kw


# --- names and environment -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "name"),
    [
        (None, "tick"),
        ("", "tick"),
        ("My Jobs!", "my-jobs"),
        ("../..", "tick"),
        ("a__b  c", "a-b-c"),
        ("x" * 100, "x" * 64),
    ],
)
def test_timer_name_sanitizes(text, name):
    assert common.timer_name(text) == name
    assert launchd.launchd_label(name) == f"dev.tickq.{name}"


@pytest.mark.parametrize("bad", ["", "a b", "../x", "-x", "x/y", "a.b"])
def test_unsanitized_names_are_refused(bad):
    with pytest.raises(TimerError, match="timer_name"):
        systemd.systemd_unit_names(bad)
    with pytest.raises(TimerError):
        launchd.launchd_label(bad)


SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def test_timer_environment_keeps_only_what_tick_needs(tmp_path):
    environ = {"PATH": "/p", "DATABASE_URL": "postgresql:///x", "HOME": "/h", "TICKQ_DATA_DIR": ""}
    env = timer_environment(registry_path=tmp_path / "registry.toml", environ=environ,
                            program_dir=Path("/opt/tickq/bin"))
    assert env == {
        # this tickq's folder and the system's, never the shell's PATH
        "PATH": f"/opt/tickq/bin:{SYSTEM_PATH}",
        "DATABASE_URL": "postgresql:///x",
        "TICKQ_REGISTRY": str(tmp_path / "registry.toml"),
        # the ledger folder of this shell's manual runs, so the timer's ticks find them
        "TICKQ_RUN_DIR": str(Path(tempfile.gettempdir()) / f"tickq-{os.getuid()}"),
    }
    env = timer_environment(
        registry_path=Path("registry.toml"), environ={"TICKQ_DATA_DIR": "/d", "TICKQ_RUN_DIR": "r"},
        program_dir=Path("/usr/bin"),
    )
    assert env["PATH"] == SYSTEM_PATH  # a tickq in a system folder adds none
    assert env["TICKQ_DATA_DIR"] == "/d"
    assert Path(env["TICKQ_REGISTRY"]).is_absolute()
    assert env["TICKQ_RUN_DIR"] == str(Path("r").absolute())
    # a unit that runs as another user: that user's ledger folder
    other = timer_environment(registry_path=Path("registry.toml"), environ={},
                              program_dir=Path("/usr/bin"), uid=4242)
    assert other["TICKQ_RUN_DIR"] == str(Path(tempfile.gettempdir()) / "tickq-4242")


# --- launchd ---------------------------------------------------------------------------------


def test_launchd_plist_has_every_key():
    plist = plistlib.loads(launchd.launchd_plist(**plist_kwargs()))
    assert plist == {
        "Label": "dev.tickq.tick",
        "ProgramArguments": [TICKQ, "tick"],
        "StartCalendarInterval": [{"Minute": m} for m in range(0, 60, 5)],
        "RunAtLoad": True,
        "WorkingDirectory": "/srv/my jobs",
        "StandardOutPath": "/Users/me/Library/Logs/tickq/dev.tickq.tick.log",
        "StandardErrorPath": "/Users/me/Library/Logs/tickq/dev.tickq.tick.err.log",
        "EnvironmentVariables": ENV,
        "ProcessType": "Background",
        "AbandonProcessGroup": False,
        "ExitTimeOut": 30,
    }
    assert Path(plist["ProgramArguments"][0]).is_absolute()
    assert type(plist["RunAtLoad"]) is bool
    # An interval that divides no hour counts from the agent's start instead.
    odd = plistlib.loads(launchd.launchd_plist(**plist_kwargs(interval_seconds=420)))
    assert odd["StartInterval"] == 420 and "StartCalendarInterval" not in odd


def test_launchd_plist_is_xml_and_escapes_text():
    data = launchd.launchd_plist(
        **plist_kwargs(program_arguments=[TICKQ, "a <b> & 'c' \"d\""], interval_seconds=60)
    )
    assert data.startswith(b'<?xml version="1.0" encoding="UTF-8"?>')
    assert b"&lt;b&gt; &amp;" in data
    plist = plistlib.loads(data)
    assert plist["ProgramArguments"][1] == "a <b> & 'c' \"d\""
    assert plist["StartCalendarInterval"] == [{"Minute": m} for m in range(60)]


@pytest.mark.parametrize(
    ("over", "match"),
    [
        ({"program_arguments": ["tickq", "tick"]}, "absolute path"),
        ({"program_arguments": []}, "non-empty"),
        ({"program_arguments": TICKQ}, "non-empty list"),
        ({"interval_seconds": 0}, "interval_seconds"),
        ({"interval_seconds": 1.5}, "interval_seconds"),
        ({"interval_seconds": True}, "interval_seconds"),
        ({"working_directory": Path("relative")}, "working_directory"),
        ({"stdout_path": Path("out.log")}, "stdout_path"),
        ({"environment": {"A B": "x"}}, "not a valid name"),
        ({"environment": {"A": 1}}, "must be a string"),
        ({"label": "has space"}, "label"),
    ],
)
def test_launchd_plist_refuses_bad_input(over, match):
    with pytest.raises(TimerError, match=match):
        launchd.launchd_plist(**plist_kwargs(**over))


def test_template_documents_the_same_keys():
    template = plistlib.loads(TEMPLATE.read_bytes())
    generated = plistlib.loads(launchd.launchd_plist(**plist_kwargs()))
    assert template.keys() == generated.keys()
    for key, value in generated.items():
        assert type(template[key]) is type(value), key
        if isinstance(value, bool) or key in ("ProcessType", "ExitTimeOut"):
            assert template[key] == value, key
    assert set(template["EnvironmentVariables"]) == {
        "PATH",
        "TICKQ_REGISTRY",
        "DATABASE_URL",
        "TICKQ_DATA_DIR",
        "TICKQ_RUN_DIR",
    }


def test_launchd_paths(tmp_path):
    paths = launchd.launchd_paths("dev.tickq.tick", home=tmp_path)
    assert paths.plist == tmp_path / "Library/LaunchAgents/dev.tickq.tick.plist"
    assert paths.log == tmp_path / "Library/Logs/tickq/dev.tickq.tick.log"
    assert launchd.launchd_paths("dev.tickq.x").plist.parent == Path.home() / "Library/LaunchAgents"
    with pytest.raises(TimerError):
        launchd.launchd_paths("../evil")


def test_launchctl_argv():
    assert launchd.launchctl_bootout_argv(501, "dev.tickq.tick") == [
        "launchctl",
        "bootout",
        "gui/501/dev.tickq.tick",
    ]
    assert launchd.launchctl_bootstrap_argv(501, Path("/U/me/L/dev.tickq.tick.plist")) == [
        "launchctl",
        "bootstrap",
        "gui/501",
        "/U/me/L/dev.tickq.tick.plist",
    ]
    assert launchd.launchctl_enable_argv(501, "dev.tickq.tick") == [
        "launchctl",
        "enable",
        "gui/501/dev.tickq.tick",
    ]
    assert launchd.launchctl_print_argv(0, "dev.tickq.a") == [
        "launchctl", "print", "gui/0/dev.tickq.a"]


@pytest.mark.skipif(sys.platform == "darwin", reason="on macOS this would really install")
def test_launchd_install_refuses_off_macos_and_writes_nothing(tmp_path):
    data = launchd.launchd_plist(**plist_kwargs(stdout_path=tmp_path / "logs/o.log"))
    with pytest.raises(TimerError, match=r"only exist on darwin.*`tickq systemd install`"):
        launchd.launchd_install(data, "dev.tickq.tick", home=tmp_path)
    with pytest.raises(TimerError, match="only exist on darwin"):
        launchd.launchd_uninstall("dev.tickq.tick", home=tmp_path)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the Linux side of the check")
def test_systemd_install_is_not_refused_on_linux_by_the_platform_check():
    common.require_platform("linux", "systemd")  # no exception; the install itself is not run


# --- cron ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("seconds", "schedule"),
    [
        (60, "* * * * *"),
        (120, "*/2 * * * *"),
        (300, "*/5 * * * *"),
        (900, "*/15 * * * *"),
        (1800, "*/30 * * * *"),
        (3600, "0 * * * *"),
    ],
)
def test_cron_schedule(seconds, schedule):
    assert cron.cron_schedule(seconds) == schedule


@pytest.mark.parametrize("seconds", [30, 90, 420, 2400, 7200, 86400])
def test_cron_refuses_uneven_intervals(seconds):
    with pytest.raises(TimerError, match=r"(?s)cron cannot.*systemd"):
        cron.cron_schedule(seconds)


def test_crontab_line_text():
    line = cron.crontab_line(
        program_arguments=[TICKQ, "tick"],
        interval_seconds=300,
        working_directory=Path("/srv/my jobs"),
        environment={"PATH": "/usr/bin:/bin", "DATABASE_URL": "postgresql://u:p%40ss@db/x"},
        log_path=Path("/var/log/tickq.log"),
    )
    assert line == (
        "*/5 * * * * cd '/srv/my jobs' && { test ! -f /var/log/tickq.log || "
        "test $(wc -c < /var/log/tickq.log) -lt 10485760 || "
        "mv -f /var/log/tickq.log /var/log/tickq.log.1; } && PATH=/usr/bin:/bin "
        "DATABASE_URL=postgresql://u:p\\%40ss@db/x "
        f"exec {TICKQ} tick >> /var/log/tickq.log 2>&1"
    )
    assert "\n" not in line
    with pytest.raises(TimerError, match="every 420s"):
        cron.crontab_line(
            program_arguments=[TICKQ, "tick"],
            interval_seconds=420,
            working_directory=Path("/srv"),
            environment={},
            log_path=Path("/var/log/tickq.log"),
        )
    with pytest.raises(TimerError, match="newline"):
        cron.crontab_line(
            program_arguments=[TICKQ, "a\nb"],
            interval_seconds=300,
            working_directory=Path("/srv"),
            environment={},
            log_path=Path("/var/log/tickq.log"),
        )


def cron_command(line: str) -> str:
    """What cron hands to /bin/sh -c: the text after the five schedule fields, with `\\%` turned
    into `%` (an unescaped `%` would end the command; there must be none)."""
    command = line.split(None, 5)[5]
    assert re.search(r"(?<!\\)%", command) is None
    return command.replace("\\%", "%")


def test_the_cron_lines_log_is_bounded(tmp_path):
    log = tmp_path / "tickq.log"
    line = cron.crontab_line(program_arguments=["/bin/echo", "tick"], interval_seconds=300,
                           working_directory=tmp_path, environment={}, log_path=log)
    log.write_bytes(b"x" * (cron.LOG_MAX_BYTES + 1))
    subprocess.run(["/bin/sh", "-c", cron_command(line)], timeout=60, env={}, check=True)
    assert log.read_text() == "tick\n"
    assert (tmp_path / "tickq.log.1").stat().st_size == cron.LOG_MAX_BYTES + 1
    subprocess.run(["/bin/sh", "-c", cron_command(line)], timeout=60, env={}, check=True)
    assert log.read_text() == "tick\ntick\n", "appended while small"


def test_crontab_line_runs_under_sh(tmp_path):
    """The line, run the way cron runs it, passes every argument, variable and folder intact."""
    workdir = tmp_path / "my jobs 100%"
    workdir.mkdir()
    log = tmp_path / "it's a log.log"
    log.write_text("earlier\n")
    script = (
        "import json, os, sys; print(json.dumps({'argv': sys.argv[1:], 'cwd': os.getcwd(), "
        "'env': {k: os.environ.get(k) for k in ('A', 'B', 'C')}}), flush=True); "
        "print('to stderr', file=sys.stderr)"
    )
    args = [ODD_ARG, "'single'", "$(touch pwned)", "`x`", "*", "a;b", "", "-"]
    env = {"A": "x y %d $HOME", "B": "it's", "C": "`echo no`;"}
    line = cron.crontab_line(
        program_arguments=[sys.executable, "-c", script, *args],
        interval_seconds=600,
        working_directory=workdir,
        environment=env,
        log_path=log,
    )
    assert line.startswith("*/10 * * * * ")
    result = subprocess.run(["/bin/sh", "-c", cron_command(line)], timeout=60, env={})
    assert result.returncode == 0
    earlier, out, err = log.read_text().splitlines()
    assert earlier == "earlier"
    assert json.loads(out) == {"argv": args, "cwd": str(workdir), "env": env}
    assert err == "to stderr"
    assert not (workdir / "pwned").exists()
