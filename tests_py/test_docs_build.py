"""`make docs` fails the way the docs promise: a broken anchor, a link to a missing page and a
page left out of the nav each stop the build, and a clean site builds. Each case is a small
site of two pages built by the Makefile's own recipe, with mkdocs.yml's settings (its
validation, theme and extensions) and only the pages and the nav swapped, so a change to either
that lets a broken site through fails here."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parent.parent


def _build(tmp_path: Path, link: str, nav: list[str]) -> subprocess.CompletedProcess[str]:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "index.md").write_text(f"# Home\n\n[The other page]({link}).\n")
    (docs / "other.md").write_text("# Other\n\n## A section\n\nText.\n")
    config = yaml.safe_load((REPO / "mkdocs.yml").read_text())
    config.update(docs_dir=str(docs), site_dir=str(tmp_path / "site"), nav=nav)
    (tmp_path / "mkdocs.yml").write_text(yaml.safe_dump(config))
    return subprocess.run(
        ["make", "--no-print-directory", "-C", str(REPO), "docs",
         f"MKDOCS_CONFIG={tmp_path / 'mkdocs.yml'}"],
        capture_output=True, text=True, timeout=120, check=False)


def test_a_clean_site_builds(tmp_path: Path) -> None:
    built = _build(tmp_path, "other.md#a-section", ["index.md", "other.md"])
    assert built.returncode == 0, built.stdout + built.stderr
    assert (tmp_path / "site" / "other.html").exists()


@pytest.mark.parametrize(("link", "nav", "named"), [
    ("other.md#no-such-section", ["index.md", "other.md"], "'#no-such-section'"),
    ("missing.md", ["index.md", "other.md"], "'missing.md'"),
    ("other.md", ["index.md"], "other.md"),
], ids=["broken anchor", "missing page", "page out of the nav"])
def test_a_broken_site_fails_the_build(tmp_path: Path, link: str, nav: list[str],
                                      named: str) -> None:
    built = _build(tmp_path, link, nav)
    assert built.returncode != 0, f"built a broken site:\n{built.stdout}{built.stderr}"
    said = built.stdout + built.stderr
    assert "Aborted with" in said and named in said, said
