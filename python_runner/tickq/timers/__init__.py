"""What wakes `tickq tick` periodically: a launchd agent (macOS, launchd.py), a systemd timer
(Linux, systemd.py) or a crontab line (anywhere else, cron.py); environment.py is what each
passes to the tick, common.py the checks and helpers they share.

Everything that decides *what* to install is pure and tested: the plist bytes, the unit texts,
the crontab line and the argv lists handed to launchctl/systemctl. The side-effecting functions
(`launchd_install`, `launchd_uninstall`, `systemd_install`, `systemd_uninstall`) only write those
files and run those argv lists, and raise `TimerError` with the tool's stderr when it fails.

The three timers differ in what happens when a tick runs longer than the interval: launchd and
systemd never start a second copy of a job that is still running; cron does.

This package re-exports what the `tickq launchd|systemd|cron` commands use (a face).
"""

from tickq.timers.common import DEFAULT_NAME, TimerError, timer_name
from tickq.timers.cron import crontab_line
from tickq.timers.environment import holds_password, keep_password_out, timer_environment
from tickq.timers.launchd import (
    launchd_install,
    launchd_label,
    launchd_paths,
    launchd_plist,
    launchd_uninstall,
)
from tickq.timers.systemd import (
    systemd_install,
    systemd_uninstall,
    systemd_unit_dir,
    systemd_units,
)

__all__ = [
    "DEFAULT_NAME", "TimerError", "crontab_line", "holds_password", "keep_password_out",
    "launchd_install", "launchd_label", "launchd_paths", "launchd_plist", "launchd_uninstall",
    "systemd_install", "systemd_uninstall", "systemd_unit_dir", "systemd_units",
    "timer_environment", "timer_name",
]
