"""tickq.timers.systemd: the service and timer units that make systemd wake `tickq tick`, their
words quoted as systemd reads them, checked by `systemd-analyze verify` when it exists, and the
systemctl argv that installs them."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from test_os_timers import ODD_ARG, TICKQ

from tickq.timers import systemd
from tickq.timers.common import TimerError


def units(**over):
    kw = dict(
        name="my-jobs",
        program_arguments=[TICKQ, "tick", "--note", ODD_ARG],
        interval_seconds=300,
        working_directory=Path("/srv/my jobs/100%"),
        environment={"PATH": "/usr/bin:/bin", "DATABASE_URL": "postgresql://u:p%40ss@db/x"},
    )
    kw.update(over)
    return systemd.systemd_units(**kw)


def lines(text: str) -> list[str]:
    return text.splitlines()


def unquote_systemd_words(value: str) -> list[str]:
    """systemd's rules for words in ExecStart=/Environment=, for double-quoted words only:
    C escapes inside the quotes, then %% -> % (specifiers) and, for ExecStart=, $$ -> $."""
    words = re.findall(r'"((?:[^"\\]|\\.)*)"(?:\s+|$)', value)
    assert " ".join(f'"{w}"' for w in words) == value, "every word is double-quoted"
    escapes = {"n": "\n", "t": "\t", "\\": "\\", '"': '"'}

    def one(word: str) -> str:
        word = re.sub(r"\\x([0-9a-f]{2})", lambda m: chr(int(m.group(1), 16)), word)
        return re.sub(r"\\(.)", lambda m: escapes[m.group(1)], word)

    return [one(w) for w in words]


def test_systemd_service_unit():
    files = units()
    assert set(files) == {"tickq-my-jobs.service", "tickq-my-jobs.timer"}
    service = lines(files["tickq-my-jobs.service"])
    assert "[Service]" in service
    assert "Type=oneshot" in service
    assert "KillMode=control-group" in service
    assert "TimeoutStopSec=30s" in service
    assert not any(line.startswith("TimeoutStartSec=") for line in service)
    assert "WorkingDirectory=/srv/my jobs/100%%" in service
    assert 'Environment="PATH=/usr/bin:/bin"' in service
    assert 'Environment="DATABASE_URL=postgresql://u:p%%40ss@db/x"' in service
    (exec_line,) = [line for line in service if line.startswith("ExecStart=")]
    value = exec_line.removeprefix("ExecStart=")
    assert value == (
        f'"{TICKQ}" "tick" "--note" "50%% of $$HOME and \\"quotes\\" \\\\ back\\tslash"'
    )
    words = unquote_systemd_words(value)
    assert [w.replace("%%", "%").replace("$$", "$") for w in words] == [
        TICKQ,
        "tick",
        "--note",
        ODD_ARG,
    ]


def test_systemd_unit_user():
    assert not any(x.startswith("User=") for x in lines(units()["tickq-my-jobs.service"]))
    service = lines(units(user="tickq")["tickq-my-jobs.service"])
    assert service.index("User=tickq") < service.index("[Service]") + 3
    for bad in ("", "a\nExecStartPre=/bin/sh", " tickq"):
        with pytest.raises(TimerError, match="cannot run a unit as user"):
            units(user=bad)


def test_systemd_timer_unit():
    timer = lines(units(interval_seconds=90)["tickq-my-jobs.timer"])
    for line in [
        "[Timer]",
        "OnBootSec=1min",
        "OnUnitActiveSec=90s",
        "OnUnitInactiveSec=90s",
        "AccuracySec=1s",
        "Persistent=true",
        "Unit=tickq-my-jobs.service",
        "[Install]",
        "WantedBy=timers.target",
    ]:
        assert line in timer
    assert timer.index("[Install]") > timer.index("[Timer]")


def test_systemd_timer_fires_on_the_clock_when_the_tick_divides_an_hour():
    for seconds, calendar in ((300, "OnCalendar=*:0/5"), (60, "OnCalendar=*:0/1"),
                              (3600, "OnCalendar=*:00"), (900, "OnCalendar=*:0/15")):
        timer = lines(units(interval_seconds=seconds)["tickq-my-jobs.timer"])
        assert calendar in timer and "Persistent=true" in timer
        assert not any(x.startswith(("OnUnitActiveSec", "OnBootSec")) for x in timer)


def test_systemd_options():
    service = units(stop_timeout_seconds=5, start_timeout_seconds=3600)["tickq-my-jobs.service"]
    assert "TimeoutStopSec=5s" in lines(service)
    assert "TimeoutStartSec=3600s" in lines(service)
    with pytest.raises(TimerError, match="newline|working directory"):
        units(working_directory=Path("/srv/a\nb"))
    with pytest.raises(TimerError, match="NUL"):
        units(program_arguments=[TICKQ, "a\0b"])
    with pytest.raises(TimerError, match="absolute"):
        units(program_arguments=["tickq"])


def test_systemd_quote_control_characters():
    assert systemd.systemd_quote("a\nb\x01c\x7f") == '"a\\nb\\x01c\\x7f"'
    assert systemd.systemd_exec_line(["/bin/x", "${A}"]) == '"/bin/x" "$${A}"'


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="needs systemd-analyze")
def test_systemd_analyze_accepts_the_units(tmp_path):
    files = units(
        program_arguments=[sys.executable, "-c", "pass", ODD_ARG],
        working_directory=tmp_path,
    )
    for unit, text in files.items():
        (tmp_path / unit).write_text(text)
    run = tmp_path / "run"
    run.mkdir()
    result = subprocess.run(
        ["systemd-analyze", "verify", "--user", *(str(tmp_path / unit) for unit in files)],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "XDG_RUNTIME_DIR": str(run)},
    )
    if "Failed to initialize manager" in result.stderr:
        pytest.skip(f"systemd-analyze cannot run here: {result.stderr.strip()}")
    assert result.returncode == 0, result.stderr
    assert "tickq-my-jobs" not in result.stderr, result.stderr


def test_systemctl_argv():
    assert systemd.systemd_unit_dir(home=Path("/h")) == Path("/h/.config/systemd/user")
    assert systemd.systemctl_daemon_reload_argv() == ["systemctl", "--user", "daemon-reload"]
    assert systemd.systemctl_enable_argv("tickq-x.timer") == [
        "systemctl",
        "--user",
        "enable",
        "tickq-x.timer",
    ]
    assert systemd.systemctl_restart_argv("tickq-x.timer") == [
        "systemctl",
        "--user",
        "restart",
        "tickq-x.timer",
    ]
    assert systemd.systemctl_disable_argv("tickq-x.timer") == [
        "systemctl",
        "--user",
        "disable",
        "--now",
        "tickq-x.timer",
    ]


def test_systemd_install_refuses_units_it_did_not_make(tmp_path):
    if not sys.platform.startswith("linux"):
        with pytest.raises(TimerError, match="only exist on linux"):
            systemd.systemd_install(units(), home=tmp_path)
        return
    with pytest.raises(TimerError, match="expected the units"):
        systemd.systemd_install({"evil.service": "", "../x.timer": ""}, home=tmp_path)
    assert list(tmp_path.iterdir()) == []
