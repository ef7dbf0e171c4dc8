"""The `tickq launchd|systemd|cron` commands (filled in with os_timers)."""

from __future__ import annotations

import argparse


def add_commands(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    return None
