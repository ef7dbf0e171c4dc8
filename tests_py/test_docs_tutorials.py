"""Each tutorial's commands run, in order, in one shell, as its reader would run them: on a
fresh home folder, with the embedded PostgreSQL tickq starts itself (one server for the
module, in a data folder of the test's). What each command prints is what the page shows, up
to what differs from run to run (docs/gen/tutorials.py says what is masked). After changing
what a tutorial's commands print: `python docs/gen/tutorials.py --update PAGE`.

A page that differs is run once more, on a fresh home, before the test fails: a tick that
happens to straddle a kind's next slot (the demo's tick lasts two seconds) rightly claims that
kind again, and prints more than the page. A real difference differs twice."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from tutorial_shell import REPO, Home, reader

sys.path.insert(0, str(REPO / "docs" / "gen"))
import tutorials  # noqa: E402

PAGES = sorted(p for p in [*(REPO / "docs" / "tutorials").glob("*.md"), REPO / "README.md"]
               if "```console" in p.read_text())


@pytest.fixture(scope="module")
def new_home() -> Iterator[Callable[[str, bool], Home]]:
    with reader() as factory:
        yield factory


def test_the_tutorials_with_commands_are_found() -> None:
    assert {p.stem for p in PAGES} >= {"first-tick", "from-crontab", "check-in-ci", "README"}


@pytest.mark.parametrize("page", PAGES, ids=[p.stem for p in PAGES])
def test_the_tutorial_prints_what_its_page_shows(
        page: Path, new_home: Callable[[str, bool], Home]) -> None:
    text = page.read_text()
    problems: list[str] = []
    for attempt in range(2):
        home, env, folders = new_home(f"{page.stem}-{attempt}", tutorials.ON_PATH in text)
        ran = tutorials.run(text, cwd=tutorials.start(text, home), env=env)
        assert ran
        found = tutorials.differences(ran, folders)
        if not found:
            return
        problems += [f"(run {attempt + 1}) {p}" for p in found]
    assert not problems, (f"{page.name}: run `python docs/gen/tutorials.py --update "
                          f"{page.relative_to(REPO)}` if the new output is right\n\n"
                          + "\n\n".join(problems))


def test_a_page_that_shows_other_output_fails(new_home: Callable[[str, bool], Home]) -> None:
    page = "```console\n$ echo hello\nhullo\n$ false\n```\n"
    home, env, folders = new_home("wrong", False)
    problems = tutorials.differences(tutorials.run(page, cwd=home, env=env), folders)
    assert len(problems) == 2 and "hullo" in problems[0] and "exited 1" in problems[1]


def test_masks_leave_what_matters(new_home: Callable[[str, bool], Home]) -> None:
    """Times and durations are masked; outcomes, kinds and levels are not."""
    home, _, folders = new_home("masks", False)
    ok = ["2026-12-07T05:16:04.746Z INFO run.finished kind=backup outcome=ok duration_s=0.07"]
    failed = ["2026-12-08T01:00:00.001Z WARNING run.finished kind=backup outcome=failed "
              "duration_s=1.5"]
    later = ["2027-01-01T00:00:00.000Z INFO run.finished kind=backup outcome=ok duration_s=9.9"]
    assert tutorials.masked(ok, folders) == tutorials.masked(later, folders)
    assert tutorials.masked(ok, folders) != tutorials.masked(failed, folders)
    assert tutorials.masked([f"{home}/x"], folders) == ["/home/me/x"]
    assert (tutorials.masked(["backup waiting 06:30 in 4m ok now"], folders)
            == tutorials.masked(["backup waiting Dec 08 06:15 in 23h49m ok 12m ago"], folders))
    done = ['<time> INFO tick.done outcomes="{\\"ok\\": 3, \\"failed\\": 1}"', "----  --"]
    same = ['<time> INFO tick.done outcomes="{\\"failed\\": 1, \\"ok\\": 3}"', "-------  --"]
    other = ['<time> INFO tick.done outcomes="{\\"failed\\": 2, \\"ok\\": 3}"', "----  --"]
    assert tutorials.masked(done, folders) == tutorials.masked(same, folders)
    assert tutorials.masked(done, folders) != tutorials.masked(other, folders)
