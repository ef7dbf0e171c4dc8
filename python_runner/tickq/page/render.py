"""The status page: one self-contained HTML file (inline CSS and SVG; no script, no font, no
request to anywhere) drawn from the functions in ``sql/api/13_page.sql``.

The database decides what happened (which runs, how long each waited, when a kind went stale, how
many slots were held); this package only places it on a page. Every piece of text reaches the
page through a Jinja2 template with autoescape on, and the page forbids scripts and remote loads
with its own Content-Security-Policy, so a job's output can print ``<script>`` and stay text.
"""

from __future__ import annotations

import os
import tempfile
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from jinja2 import Environment, PackageLoader, select_autoescape
from markupsafe import Markup

from tickq.db.api.page import HOLDERS_NAMED, PageData, page_data
from tickq.db.api.session import Connection
from tickq.db.contract import LANES
from tickq.db.errors import InvalidInput
from tickq.page import layout
from tickq.page.upcoming import held_note
from tickq.registry.durations import human_duration

__all__ = ["LANES", "PageData", "collect", "html_target", "render", "write_html", "zone"]


def collect(
    conn: Connection, hours: float = 24.0, now: datetime | None = None,
    steps: int = 600, upcoming_limit: int = 50,
) -> PageData:
    """Read the page's data in one repeatable-read transaction, so every part agrees."""
    return page_data(conn, hours, now, steps, upcoming_limit)


_ENV = Environment(
    loader=PackageLoader("tickq.page", "templates"),
    autoescape=select_autoescape(default=True, default_for_string=True),
    trim_blocks=True,
    lstrip_blocks=True,
)


def _lists_breakable(text: object) -> Markup:
    """`text`, escaped, with a line break allowed after each comma: a schedule's list of
    times ("00:00,00:30,...") is one word to the browser, which would widen its column."""
    return Markup(",<wbr>").join(str(text).split(","))


_ENV.filters["lists_breakable"] = _lists_breakable


def zone(name: str | None) -> ZoneInfo:
    try:
        return ZoneInfo(name or "UTC")
    except (ZoneInfoNotFoundError, ValueError):
        return ZoneInfo("UTC")


UPCOMING_SHOWN = 10  # runs the Upcoming table shows open; the rest of the list is folded
FAILING_NAMED = 5  # kinds the failing tile names
POOLS_LISTED = 50  # rows of the pools table; the rest are counted under it


def render(data: PageData) -> str:
    """The page as one HTML document. Every time is in the registry's zone, to the minute (to
    the second where seconds tell runs apart), never raw UTC."""
    tz = zone(data.header["timezone"])
    frame = layout.Frame(data.header["window_start"], data.header["window_end"])
    timeline = layout.timeline(frame, data.kinds, data.timeline, data.waiting,
                               data.header["stale_after"], LANES)
    slots = layout.slot_plot(frame, data.slots, data.header["slots"])
    pool_plots = layout.pool_plots(frame, data.pools)

    def local(value: datetime | None) -> str:
        return value.astimezone(tz).strftime("%Y-%m-%d %H:%M") if value else "-"

    def local_s(value: datetime | None) -> str:
        return value.astimezone(tz).strftime("%Y-%m-%d %H:%M:%S") if value else "-"

    def clock(value: datetime) -> str:
        seconds = frame.step < timedelta(minutes=1)
        return value.astimezone(tz).strftime("%H:%M:%S" if seconds else "%H:%M")

    def zoned(value: datetime | None) -> str:
        return f"{local(value)} {tz.key}"

    timed = [u for u in data.upcoming if u["due_at"] is not None]
    failing = list(data.header["failing_kinds"] or [])
    return _ENV.get_template("page.html").render(
        data=data, timeline=timeline, detailed_bars=layout.DETAILED_BARS, slots=slots,
        zone=str(tz.key), local=local,
        pool_plots=pool_plots, pools_listed=data.pools[:POOLS_LISTED],
        pools_more=len(data.pools) - POOLS_LISTED, holders_named=HOLDERS_NAMED,
        pools_full=sum(1 for p in data.pools if p["slots"] and not p["free"]),
        pools_waited=any(p["slots"] and not p["free"] and p["waiting"] for p in data.pools),
        local_s=local_s, clock=clock, marks=frame.marks(tz), duration=human_duration,
        lanes=LANES, generated=local_s(data.header["window_end"]),
        since_began=frame.end - frame.start < timedelta(hours=data.hours),
        span=frame.end - frame.start,
        failing_named=failing[:FAILING_NAMED], failing_more=len(failing) - FAILING_NAMED,
        note=lambda row: held_note(row, zoned), shown_open=len(timed[:UPCOMING_SHOWN]),
        upcoming_open=timed[:UPCOMING_SHOWN] + [u for u in data.upcoming if u["due_at"] is None],
        upcoming_folded=timed[UPCOMING_SHOWN:], shown=len(timed),
        total=data.upcoming[0]["total"] if data.upcoming else 0, hours=f"{data.hours:g}",
    )


def html_target(path: str | Path) -> Path:
    """``path`` as a file the page can replace, or InvalidInput naming what is wrong with it: a
    folder, or a folder that does not exist (created by nobody but the user: a typo in the path
    must not leave a tree of folders behind)."""
    target = Path(path)
    if target.is_dir():
        raise InvalidInput(f"{target}: is a folder; give the page's file name, e.g. "
                           f"{target / 'status.html'}")
    folder = target.parent
    if not folder.is_dir():
        what = "not a folder" if folder.exists() else "no such folder"
        raise InvalidInput(f"{target}: {folder}: {what} (create it first)")
    return target


def write_html(conn: Connection, path: str | Path, hours: float = 24.0) -> Path:
    """Render the page and replace ``path`` with it atomically (a reader never sees half)."""
    target = html_target(path)
    replace_file(target, render(collect(conn, hours)))
    return target


def replace_file(target: Path, text: str) -> None:
    """Write ``text`` beside ``target`` and rename it over ``target``: a reader sees the old
    file or the new one, never part of one."""
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise

