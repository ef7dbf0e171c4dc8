"""The status page screenshot in the docs (docs/images/status-page.png) is taken here, by the
browser test's Chromium (tests_py/browser.py), of the page `tickq report` writes after a real
tick of examples/demo: a success, a failure that succeeds on its retry, a run killed at its
timeout. The committed image must be one this test takes (a PNG of the same size); with
TICKQ_DOCS_UPDATE=1 the test writes the one it took over it."""

from __future__ import annotations

import base64
import os
import shutil
import struct
from pathlib import Path

from browser import Browser
from processes import tickq

REPO = Path(__file__).resolve().parent.parent
SHOT = REPO / "docs" / "images" / "status-page.png"
WIDTH, HEIGHT = 1280, 900  # the window the page is made for, as tests_py/test_page_glance.py


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    return struct.unpack(">II", data[16:24])


def screenshot(page: Path, profile: Path) -> bytes:
    browser = Browser(profile, WIDTH, HEIGHT)
    try:
        browser.open(page)
        assert browser.value("document.documentElement.scrollWidth") <= WIDTH
        shot = browser.call("Page.captureScreenshot", session=True, format="png")
        return base64.b64decode(shot["data"])
    finally:
        browser.close()


def test_the_status_page_screenshot_is_one_this_test_takes(db_url: str, tmp_path: Path) -> None:
    demo = tmp_path / "demo"
    shutil.copytree(REPO / "examples" / "demo", demo)
    done = tickq("tick", "--registry", str(demo / "registry.toml"), "--database-url", db_url)
    assert done.returncode == 0, done.stderr
    page = tmp_path / "status.html"
    done = tickq("report", "--html", str(page), "--registry", str(demo / "registry.toml"),
                 "--database-url", db_url)
    assert done.returncode == 0, done.stderr
    assert "slow_report" in page.read_text()

    taken = screenshot(page, tmp_path / "profile")

    assert png_size(taken) == (WIDTH, HEIGHT)
    assert len(taken) > 20_000, "a blank page"  # a page of text and plots, not one colour
    if os.environ.get("TICKQ_DOCS_UPDATE") == "1":
        SHOT.parent.mkdir(exist_ok=True)
        SHOT.write_bytes(taken)
    assert SHOT.exists(), f"no {SHOT}: run this test with TICKQ_DOCS_UPDATE=1"
    assert png_size(SHOT.read_bytes()) == png_size(taken)
