"""What the status page says at a glance, measured in a real headless Chromium (tests_py/browser.py)
on a queue built by real ticks: runs drawn at their real length (or one bar marked with its count),
a page as wide as the window whatever a job prints, the failing tile naming the kinds, a timeline
whose axis labels fit, every time in the registry's zone to the second, and the kinds table above
the fold however many runs are upcoming.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import psycopg
import pytest
from browser import Browser
from processes import tickq

REPO = Path(__file__).resolve().parent.parent
ZONE = "Asia/Kolkata"  # +05:30: a time left in UTC cannot pass for local
WIDTH, HEIGHT = 1280, 900
FILLERS = [f"every{n:02d}" for n in range(20)]  # 20 kinds every 5 minutes: 5760 runs a day

REGISTRY = f"""\
[settings]
slots = 3
timezone = "{ZONE}"
alert_after = 1

# Daily, so that no kind's next slot falls inside the few seconds the ticks take (a slot
# there would be a real second run a moment later: one bar with it, rightly).
[kinds.quick]
command = ["sh", "-c", "echo quick"]
every = "1d"
timeout = "10s"

[kinds.hang]
command = ["sleep", "30"]
every = "1d"
timeout = "1s"

[kinds.loud]
command = ["sh", "-c", "head -c 6000 /dev/zero | tr '\\\\0' x; echo; exit 2"]
every = "1d"
timeout = "10s"
""" + "".join(f"""
[kinds.{name}]
command = ["true"]
every = "5m"
timeout = "10s"
priority = "low"
""" for name in FILLERS)


# The ticks' runs a second apart however fast the ticks were (runs less than a pixel of the
# 3-minute page, 0.2 s, after a bar's drawn end are one bar by design): each tick's runs, named
# by its dispatcher, are moved back one second for each tick after it, and the queue's start
# with the first; a run keeps its length. Seven ticks, not seven seconds of sleeping.
SPREAD = """
WITH tick AS (
    SELECT dispatcher, (count(*) OVER (ORDER BY min(id) DESC) - 1) * interval '1 second' AS back
    FROM tickq.job_run GROUP BY dispatcher
), moved AS (
    UPDATE tickq.job_run AS r
    SET due_at = r.due_at - t.back, claimed_at = r.claimed_at - t.back,
        started_at = r.started_at - t.back, finished_at = r.finished_at - t.back,
        slot_at = r.slot_at - t.back, first_slot_at = r.first_slot_at - t.back
    FROM tick AS t WHERE r.dispatcher = t.dispatcher
)
UPDATE tickq.job_kind SET created_at = created_at - (SELECT max(back) FROM tick)
"""


@pytest.fixture(scope="module")
def queue(tmp_path_factory: pytest.TempPathFactory, pg_server_url: str,
          template_db: str) -> Iterator[dict[str, Any]]:
    """A new install after seven ticks a second apart (SPREAD): `quick` ran at each (0.1 s runs),
    `hang` timed out at the first four, `loud` failed at the first printing one 6000-character
    line; the fillers are due in ten minutes and never ran."""
    from tickq import db

    folder = tmp_path_factory.mktemp("glance")
    registry = folder / "registry.toml"
    registry.write_text(REGISTRY)
    name = f"t_glance_{os.getpid()}"
    db.drop_database(pg_server_url, name)
    url = db.create_database(pg_server_url, name, template=template_db)
    try:
        sync = tickq("sync", "--registry", str(registry), "--database-url", url)
        assert sync.returncode == 0, sync.stderr
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("UPDATE tickq.job_kind SET due_at = now() + interval '10 minutes' "
                         "WHERE name LIKE 'every%'")
            for n in range(7):
                again = ["quick", "hang"] if n < 4 else ["quick"]
                conn.execute("UPDATE tickq.job_kind SET due_at = now() WHERE name = ANY(%s)",
                             (again,))
                tick = tickq("tick", "--registry", str(registry), "--database-url", url)
                assert tick.returncode == 0, tick.stderr + tick.stdout
            conn.execute(SPREAD)
        yield {"url": url, "folder": folder}
    finally:
        db.drop_database(pg_server_url, name)


def report(queue: dict[str, Any], name: str, hours: str) -> Path:
    page = queue["folder"] / f"{name}.html"
    made = tickq("report", "--html", str(page), "--hours", hours, "--database-url", queue["url"])
    assert made.returncode == 0, made.stderr
    return page


@pytest.fixture(scope="module")
def pages(queue: dict[str, Any]) -> dict[str, Path]:
    """The page of the new install, then (the queue made two days old) the last day's and the
    last three minutes'."""
    new = report(queue, "new", "24")
    with psycopg.connect(queue["url"], autocommit=True) as conn:
        conn.execute("UPDATE tickq.job_kind SET created_at = created_at - interval '2 days'")
    return {"new": new, "day": report(queue, "day", "24"),
            "minutes": report(queue, "minutes", "0.05")}


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browser]:
    b = Browser(tmp_path_factory.mktemp("chromium"), WIDTH, HEIGHT)
    yield b
    b.close()


@pytest.fixture(scope="module")
def day(pages: dict[str, Path], browser: Browser) -> Browser:
    """The default page (the last 24 hours) of a queue two days old."""
    browser.open(pages["day"])
    return browser


BARS = """[...document.querySelectorAll('g.kind-row[data-kind="%s"] rect.bar')].map(r => ({
    runs: +r.dataset.runs, outcome: r.dataset.outcome, x: +r.getAttribute('x'),
    w: +r.getAttribute('width'), label: r.nextElementSibling &&
    r.nextElementSibling.classList.contains('runs-label')
        ? r.nextElementSibling.textContent : null}))"""


def runs(conn_url: str, kind: str) -> list[tuple[datetime, datetime]]:
    with psycopg.connect(conn_url) as conn:
        return conn.execute("SELECT claimed_at, finished_at FROM tickq.job_run WHERE kind = %s "
                            "ORDER BY id", (kind,)).fetchall()


def test_runs_apart_on_the_page_are_drawn_apart_at_their_real_length(
    queue: dict[str, Any], pages: dict[str, Path], browser: Browser
) -> None:
    """Over the last 3 minutes a pixel is 0.2 s: seven short runs a second or two apart are
    seven bars each as long as its run, not one bar from the first to the last; so are four
    1 s timeouts."""
    browser.open(pages["minutes"])
    per_px = 0.05 * 3600 / 900
    for kind, outcome, count in (("quick", "ok", 7), ("hang", "timeout", 4)):
        bars = browser.value(BARS % kind)
        assert [(b["outcome"], b["runs"]) for b in bars] == [(outcome, 1)] * count, (
            bars, runs(queue["url"], kind))
        for bar, (claimed, finished) in zip(bars, runs(queue["url"], kind), strict=True):
            real = (finished - claimed).total_seconds() / per_px
            assert abs(bar["w"] - max(2, real)) < 1.5, (kind, bar, real)
        xs = [b["x"] for b in bars]
        assert xs == sorted(xs) and min(b - a for a, b in zip(xs, xs[1:], strict=False)) > 2


def test_runs_too_close_to_draw_apart_are_one_bar_that_says_how_many(day: Browser) -> None:
    """Over 24 hours the seven runs fall within a pixel or two: one bar, and the page says on it
    that it holds seven runs (and, on hover, their real span)."""
    quick = day.value(BARS % "quick")
    assert len(quick) == 1 and quick[0]["runs"] == 7, quick
    assert quick[0]["label"] == "7 runs", quick
    title = day.value('document.querySelector(\'g.kind-row[data-kind="quick"] rect.bar title\')'
                      '.textContent')
    assert re.search(r"7 runs ok between \S+ \d\d:\d\d:\d\d and \S+ \d\d:\d\d:\d\d", title), title


def test_one_long_output_line_does_not_widen_the_page(day: Browser) -> None:
    day.value("document.querySelectorAll('details').forEach(d => d.open = true)")
    width = day.value("document.documentElement.scrollWidth")
    assert width <= WIDTH, f"the page is {width} px wide in a {WIDTH} px window"
    tail = day.value("document.querySelector('tr.failures[data-kind=\"loud\"] pre').innerText")
    assert "x" * 100 in tail.replace("\n", ""), "the line is still all there, wrapped"


def test_the_failing_tile_names_the_failing_kinds(day: Browser) -> None:
    tile = day.value("document.getElementById('failing-count').innerText")
    assert re.match(r"2\s*failing", tile), tile
    assert "hang" in tile and "loud" in tile, tile
    assert "quick" not in tile


def test_a_new_installs_timeline_spans_the_plot_and_keeps_its_axis_labels_inside(
    pages: dict[str, Path], browser: Browser,
) -> None:
    """A queue a few seconds old: its runs spread over the timeline (it begins when the queue
    began), not squeezed into the last pixels of 24 hours; every axis label fits."""
    day = browser
    day.open(pages["new"])
    first = day.value("Math.min(...[...document.querySelectorAll('#timeline rect.bar')]"
                      ".map(r => +r.getAttribute('x')))")
    assert first < 230 + 900 / 2, f"the first run is drawn at x={first}"
    svg = day.value("""(() => { const s = document.getElementById('timeline');
        const box = s.getBoundingClientRect();
        return {width: box.width, right: box.right,
                labels: [...s.querySelectorAll('text.hour')].map(t => {
                    const b = t.getBBox(); return [b.x, b.x + b.width]; })}; })()""")
    assert svg["width"] >= 1000, f"the timeline is {svg['width']} px wide"
    assert svg["right"] <= WIDTH
    assert len(svg["labels"]) >= 4, "the axis has its marks"
    assert all(left >= 0 and right <= svg["width"] for left, right in svg["labels"]), svg
    grid = day.value("[...document.querySelectorAll('#timeline line.grid')].map(l => "
                     "+l.getAttribute('x1'))")
    step = grid[1] - grid[0]
    assert min(grid) - 230 <= step + 0.5 and 230 + 900 - max(grid) <= step + 0.5, \
        f"the axis marks cover the whole plot: {grid}"


TIME_LIKE = re.compile(r"\d{4}-\d\d-\d\d[ T]\d\d:\d\d(?::\d\d)?(?:\.\d+)?(?:[+-]\d\d:?\d\d|Z)?")


def test_every_time_is_in_the_registrys_zone_to_the_second(queue: dict[str, Any],
                                                           day: Browser) -> None:
    text = day.value("document.body.innerText")
    times = TIME_LIKE.findall(text)
    assert times, "the page shows times"
    assert not [t for t in times if "." in t or "+" in t or "T" in t or t.endswith("Z")], \
        f"raw timestamps: {[t for t in times if '.' in t or '+' in t or 'T' in t][:5]}"
    with psycopg.connect(queue["url"]) as conn:
        (finished,) = conn.execute(
            "SELECT finished_at FROM tickq.job_run WHERE kind = 'loud'").fetchone()
    summary = day.value("document.querySelector('tr.failures[data-kind=\"loud\"] summary')"
                        ".innerText")
    local = finished.astimezone(ZoneInfo(ZONE)).strftime("%Y-%m-%d %H:%M:%S")
    assert local in summary, summary


def test_upcoming_is_a_bounded_list_below_the_kinds_table(day: Browser) -> None:
    """5760 runs are due in the next day: the kinds table still starts above the fold, the
    Upcoming list shows a few rows and says how many more there are."""
    kinds_top = day.value("document.getElementById('kinds').getBoundingClientRect().top")
    assert kinds_top < HEIGHT, f"the kinds table starts at {kinds_top} px, below the fold"
    shown = day.value("[...document.querySelectorAll('#upcoming tr.run')]"
                      ".filter(r => r.getClientRects().length).length")
    assert 1 <= shown <= 12, f"{shown} upcoming rows shown"
    more = day.value("document.getElementById('upcoming-more').innerText")
    assert re.search(r"^\d{4} more runs in the next 24 hours\b", more), more
