"""`tickq metrics` and `tickq explain`: what an outside watcher scrapes, and the one screen an
operator paged at night reads first."""

from __future__ import annotations

import argparse
import sys

from tickq.cli import common
from tickq.db.api import status
from tickq.db.errors import EXIT_OK


def cmd_metrics(args: argparse.Namespace) -> int:
    """The queue as Prometheus metrics (text exposition format), computed by the database."""
    with common.open_queue(args) as conn:
        sys.stdout.write(status.metrics_text(conn))
    return EXIT_OK
