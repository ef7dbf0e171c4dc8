"""The status page: one self-contained HTML file (inline CSS and SVG; no script, no font, no
request to anywhere) drawn from the functions in ``sql/api/13_report.sql``.

The database decides what happened (which runs, how long each waited, when a kind went stale, how
many slots were held); this package only places it on a page. Every piece of text reaches the
page through a Jinja2 template with autoescape on, and the page forbids scripts and remote loads
with its own Content-Security-Policy, so a job's output can print ``<script>`` and stay text.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import psycopg
from jinja2 import Environment, PackageLoader, select_autoescape
from psycopg.rows import dict_row

from tickq import db
from tickq.db.contract import LANES
from tickq.page import layout


@dataclass(frozen=True)
class PageData:
    """Everything the page shows, as the database answered it."""

    hours: float
    header: dict[str, Any]
    dispatchers: list[dict[str, Any]]
    timeline: list[dict[str, Any]]
    waiting: list[dict[str, Any]]
    slots: list[dict[str, Any]]
    capacity: list[dict[str, Any]]
    upcoming: list[dict[str, Any]]
    kinds: list[dict[str, Any]]


def collect(
    conn: psycopg.Connection, hours: float = 24.0, now: datetime | None = None,
    steps: int = 600, upcoming_limit: int = 50,
) -> PageData:
    """Read the page's data in one repeatable-read transaction, so every part agrees."""
    params = {"hours": hours, "now": now, "steps": steps, "limit": upcoming_limit}

    def rows(name: str) -> list[dict[str, Any]]:
        with conn.cursor(row_factory=dict_row) as cur:
            return cur.execute(db.load_query(name), params).fetchall()

    with conn.transaction():
        conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
        return PageData(
            hours=hours,
            header=rows("report_header")[0],
            dispatchers=rows("report_dispatchers"),
            timeline=rows("report_timeline"),
            waiting=rows("report_waiting"),
            slots=rows("report_slots"),
            capacity=rows("report_capacity"),
            upcoming=rows("upcoming"),
            kinds=rows("report_kinds"),
        )


_ENV = Environment(
    loader=PackageLoader("tickq.page", "templates"),
    autoescape=select_autoescape(default=True, default_for_string=True),
    trim_blocks=True,
    lstrip_blocks=True,
)


def zone(name: str | None) -> ZoneInfo:
    try:
        return ZoneInfo(name or "UTC")
    except (ZoneInfoNotFoundError, ValueError):
        return ZoneInfo("UTC")


def render(data: PageData) -> str:
    """The page as one HTML document."""
    tz = zone(data.header["timezone"])
    frame = layout.Frame(data.header["window_start"], data.header["window_end"])
    timeline = layout.timeline(frame, data.kinds, data.timeline, data.waiting,
                               data.header["stale_after"], LANES)
    slots = layout.slot_plot(frame, data.slots, data.header["slots"])

    def local(value: datetime | None) -> str:
        return value.astimezone(tz).strftime("%Y-%m-%d %H:%M") if value else "-"

    def utc(value: datetime | None) -> str:
        return value.astimezone(UTC).strftime("%Y-%m-%d %H:%M") if value else "-"

    return _ENV.get_template("page.html").render(
        data=data, timeline=timeline, slots=slots, zone=str(tz.key), local=local, utc=utc,
        duration=layout.human_duration, lanes=LANES,
        generated=local(data.header["window_end"]),
    )


def write_html(conn: psycopg.Connection, path: str | Path, hours: float = 24.0) -> Path:
    """Render the page and replace ``path`` with it atomically (a reader never sees half)."""
    target = Path(path)
    html = render(collect(conn, hours))
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(html)
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target

