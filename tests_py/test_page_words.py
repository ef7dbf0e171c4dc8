"""The status page's tables keep words whole: a long schedule description wraps between words
(or after a comma of a list), and the short words beside it ("normal", "waiting", "streak",
"p50") are never cut in two, at 1280 px in a real headless Chromium (tests_py/browser.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from browser import Browser
from processes import tickq

WIDTH, HEIGHT = 1280, 900
TIMES = ", ".join(f'"{h:02d}:{m:02d}"' for h in range(24) for m in (0, 30))
REGISTRY = f"""\
[settings]
timezone = "America/Argentina/Buenos_Aires"

[kinds.nightly_warehouse_export]
command = ["true"]
cron = "0,15,30,45 6-9,12,17-19 1-7,15,28-31 jan,mar,may,jul,sep,nov mon-fri"
timezone = "America/Argentina/Buenos_Aires"
timeout = "10m"

[kinds.half_hourly_reconciliation]
command = ["true"]
at = [{TIMES}]
on = ["mon", "tue", "wed", "thu", "fri"]
timeout = "5m"
priority = "urgent"

[kinds.streak_checker]
command = ["true"]
every = "5m"
timeout = "1m"
priority = "low"
""" + "".join(f"""
[kinds.job_{n}]
command = ["true"]
every = "{n}m"
timeout = "30s"
""" for n in range(1, 7))

# Each word of each cell of a table, as a range of its text: split when its boxes lie on more
# than one line. A word is a run of characters of one text node other than spaces, slashes and
# brackets (a zone's name may break after a "/"; a <wbr> between two parts of a list makes two
# nodes: the page's own place to break it).
SPLIT_WORDS = """(() => {
  const split = [];
  for (const cell of document.querySelectorAll('%s')) {
    const walk = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    for (let node = walk.nextNode(); node; node = walk.nextNode()) {
      for (const m of node.data.matchAll(/[^\\s\\/()]+/g)) {
        const range = document.createRange();
        range.setStart(node, m.index);
        range.setEnd(node, m.index + m[0].length);
        const tops = new Set([...range.getClientRects()].map(r => Math.round(r.top)));
        if (tops.size > 1) split.push(m[0]);
      }
    }
  }
  return split;
})()"""


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory, pg_server_url: str,
         template_db: str) -> Iterator[Path]:
    from tickq import db

    folder = tmp_path_factory.mktemp("words")
    registry = folder / "registry.toml"
    registry.write_text(REGISTRY)
    name = "t_page_words"
    db.drop_database(pg_server_url, name)
    url = db.create_database(pg_server_url, name, template=template_db)
    try:
        synced = tickq("sync", "--registry", str(registry), "--database-url", url)
        assert synced.returncode == 0, synced.stderr
        html = folder / "page.html"
        made = tickq("report", "--html", str(html), "--database-url", url)
        assert made.returncode == 0, made.stderr
        yield html
    finally:
        db.drop_database(pg_server_url, name)


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory, page: Path) -> Iterator[Browser]:
    b = Browser(tmp_path_factory.mktemp("chromium"), WIDTH, HEIGHT)
    b.open(page)
    yield b
    b.close()


def test_no_word_of_the_kinds_table_is_cut_in_two(browser: Browser) -> None:
    schedules = browser.value(
        "[...document.querySelectorAll('#kinds tr.kind td:nth-child(3)')].map(c => c.offsetHeight)")
    assert max(schedules) > 2 * min(schedules), "the long descriptions wrap onto lines"
    assert browser.value(SPLIT_WORDS % "#kinds td, #kinds th") == []


def test_the_other_tables_keep_their_words_and_the_page_its_width(browser: Browser) -> None:
    assert browser.value(SPLIT_WORDS % "#upcoming td, #upcoming th, #capacity td") == []
    width = browser.value("document.documentElement.scrollWidth")
    assert width <= WIDTH, f"the page is {width} px wide in a {WIDTH} px window"
