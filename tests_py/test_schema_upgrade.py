"""A database upgraded step by step ends with the same schema as a fresh install.

Each step is the sql/ folder of a commit that landed on main, taken from git: migrate with it,
then with the next, and finally with the working tree. A migration or API file that leaves
something behind (an old function signature, a changed default) shows up as a difference in
the schema dumps.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from tickq import db
from tickq.db import embedded
from tickq.db.errors import MigrationError

REPO = Path(__file__).resolve().parent.parent
# The first commit with the SQL core, the one before slot rows replaced the settings lock, and
# the last before sql/migrations/0100_baseline.sql replaced the chain (a database of the chain is
# recorded as at the baseline, not made again).
STEPS = ("2387920", "c74c10c", "412a04b")


def _sql_at(commit: str, into: Path) -> Path:
    names = subprocess.run(
        ["git", "-C", str(REPO), "ls-tree", "-r", "--name-only", commit, "sql"],
        capture_output=True, text=True, check=True,
    ).stdout.split()
    assert names, f"no sql/ at {commit}"
    for name in names:
        target = into / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(subprocess.run(
            ["git", "-C", str(REPO), "show", f"{commit}:{name}"], capture_output=True, check=True
        ).stdout)
    return into / "sql"


def _schema(url: str) -> str:
    params = db.url_params(url)
    dump = subprocess.run(
        [str(embedded.bin_dir() / "pg_dump"), "--schema-only", "--schema=tickq", "--no-owner",
         "--no-privileges", db.with_dbname(url, params["dbname"])],
        capture_output=True, text=True, check=True,
    ).stdout
    # pg_dump 18 fences its output with a random \restrict key; it is not part of the schema.
    return "\n".join(line for line in dump.splitlines() if not re.match(r"\\(un)?restrict ", line))


def test_an_upgraded_database_has_the_schema_of_a_fresh_one(
    tmp_path: Path, db_url: str, empty_db_url: str
) -> None:
    if not (REPO / ".git").exists():
        pytest.fail("this test reads earlier sql/ folders from git: run it in a clone")
    with db.connect(empty_db_url) as conn:
        for commit in STEPS:
            applied = db.migrate(conn, _sql_at(commit, tmp_path / commit))
            assert applied, f"migrating with {commit}'s sql/ applied nothing"
        assert db.migrate(conn), "the working tree's sql/ applied nothing on top"
    fresh, upgraded = _schema(db_url), _schema(empty_db_url)
    assert "CREATE TABLE tickq.slot" in fresh
    assert upgraded == fresh


def test_a_database_short_of_the_baseline_is_refused_as_it_is(
    tmp_path: Path, empty_db_url: str
) -> None:
    """A database the old chain left before its 0040 is not taken for the baseline: the refusal
    names the file it lacks and the commit that brings it to the chain's end, and changes
    nothing."""
    if not (REPO / ".git").exists():
        pytest.fail("this test reads earlier sql/ folders from git: run it in a clone")
    query = "SELECT array_agg(name ORDER BY version) FROM tickq.migration"
    with db.connect(empty_db_url) as conn:
        db.migrate(conn, _sql_at(STEPS[1], tmp_path))
        before = conn.execute(query).fetchone()
        with pytest.raises(MigrationError) as refused:
            db.migrate(conn)
        assert conn.execute(query).fetchone() == before
    assert "lacks 0" in str(refused.value) and "412a04b" in str(refused.value), refused.value
