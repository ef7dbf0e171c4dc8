"""The status page of a big queue stays a page: a queue generated in SQL (generate_series) with
more bars in its window than the page draws one by one gets each kind's bars of one outcome as
one shape, every bar still in it, a note saying so, and a size that follows the kinds, not the
runs. Sizes and counts only: how long the page takes is bench/page_speed.py's.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from processes import tickq

KINDS, RUNS_EACH = 200, 40  # 8,000 runs, each its own bar: four times what is drawn one by one
LANES = "ARRAY['urgent', 'high', 'normal', 'low']"

QUEUE = f"""
INSERT INTO tickq.job_kind (name, every, timeout, priority, due_at, created_at)
SELECT 'k' || lpad(i::text, 4, '0'), interval '30 minutes', interval '1 minute',
    ({LANES})[1 + i % 4]::tickq.priority, now() + interval '10 minutes', now() - interval '2 days'
FROM generate_series(1, {KINDS}) AS i;

INSERT INTO tickq.job_run (kind, attempt, run_trigger, slots, dispatcher, claimed_at,
    started_at, finished_at, outcome, exit_code, output_tail, duration, due_at)
SELECT 'k' || lpad(i::text, 4, '0'), 1, 'schedule', 1, 'host:' || (i % 3), x.at, x.at,
    x.at + interval '20 seconds', CASE WHEN n % 10 = 0 THEN 'failed' ELSE 'ok' END::tickq.outcome,
    CASE WHEN n % 10 = 0 THEN 1 ELSE 0 END, 'done', interval '20 seconds', x.at
FROM generate_series(1, {KINDS}) AS i
CROSS JOIN generate_series(1, {RUNS_EACH}) AS n
CROSS JOIN LATERAL (SELECT now() - interval '23 hours' + n * interval '30 minutes'
    + i * interval '3 seconds' AS at) AS x;
"""


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory, pg_server_url: str,
        template_db: str) -> Iterator[dict[str, Any]]:
    """The page (`tickq report --html`) of 200 kinds that ran every 30 minutes all day, every
    tenth run failed, and the bars the database says the window holds, per kind and outcome."""
    from tickq import db

    name = f"t_page_scale_{os.getpid()}"
    db.drop_database(pg_server_url, name)
    url = db.create_database(pg_server_url, name, template=template_db)
    try:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(QUEUE)
        page = tmp_path_factory.mktemp("scale") / "page.html"
        made = tickq("report", "--html", str(page), "--database-url", url)
        assert made.returncode == 0, made.stderr
        with psycopg.connect(url) as conn:
            bars = Counter(conn.execute(
                "SELECT kind, outcome::text FROM tickq.report_timeline_at(24)").fetchall())
        yield {"html": page.read_text(), "bars": bars}
    finally:
        db.drop_database(pg_server_url, name)


SHAPE = re.compile(r'<g class="kind-row" data-kind="([^"]+)"|<(rect|path) class="bar (\w+)[^"]*"'
                   r'[^>]*?(?: d="([^"]*)")?>')


def drawn(html: str) -> tuple[Counter[tuple[str, str]], Counter[tuple[str, str]]]:
    """Per kind and outcome: the bar elements of the timeline, and the bars (rectangles) they
    draw, a path drawing one closed rectangle per bar."""
    elements: Counter[tuple[str, str]] = Counter()
    rects: Counter[tuple[str, str]] = Counter()
    kind = ""
    for m in SHAPE.finditer(html):
        if m.group(1):
            kind = m.group(1)
            continue
        elements[kind, m.group(3)] += 1
        rects[kind, m.group(3)] += 1 if m.group(2) == "rect" else m.group(4).count("z")
    return elements, rects


def test_every_bar_is_drawn_in_one_shape_per_kind_and_outcome(big: dict[str, Any]) -> None:
    assert sum(big["bars"].values()) == KINDS * RUNS_EACH, "each run its own bar"
    elements, rects = drawn(big["html"])
    assert rects == big["bars"], "every bar the database gave is on the page"
    assert max(elements.values()) <= 2, (
        f"{sum(elements.values())} bar elements for {len(big['bars'])} kinds and outcomes")


def test_the_page_follows_the_kinds_not_the_runs(big: dict[str, Any]) -> None:
    """About 1 kB a kind and 20 bytes a bar (one bar a run here): one element with its own
    hover text per run was about 200 bytes a run, 1.7 MB for this queue."""
    size = len(big["html"].encode())
    assert size < 1500 * KINDS + 25 * KINDS * RUNS_EACH, f"{size:,} bytes"


def test_the_page_says_it_summarised(big: dict[str, Any]) -> None:
    note = re.search(r'<p class="muted" id="timeline-summarised">(.*?)</p>', big["html"], re.S)
    assert note, "the timeline says it drew shapes"
    assert "8,000 bars" in note.group(1) and "tickq history KIND" in note.group(1), note.group(1)
    title = re.search(r'<g class="kind-row" data-kind="k0010".*?<path class="bar failed"[^>]*>'
                      r'<title>([^<]*)</title>', big["html"], re.S)
    assert title and title.group(1).startswith("k0010: 4 runs failed between "), title
