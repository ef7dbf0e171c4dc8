"""What a new user meets first, tried as one: a registry not where tickq looked, a file saved by
Notepad as "UTF-8 with BOM", a PATH folder the user may not search, a passfile line for another
host. Real processes; the passfile case against a PostgreSQL 15 cluster this module starts."""

from __future__ import annotations

import codecs
import shutil
import tomllib
from pathlib import Path

from processes import REPO, tickq

BOM = codecs.BOM_UTF8

# A real crontab (0xConnorRhodes/cron-scripts, file `crontab`, commit
# 6920378adbe2a10dba87b8727b11e5d58b3e7e07), its jobs as written there.
REAL_CRONTAB = (
    "SHELL=/bin/bash\n"
    "PATH=/sbin:/bin:/usr/sbin:/usr/bin:/home/cron/.local/bin\n\n"
    "*/10 * * * * /usr/bin/ruby /home/cron/code/cron-scripts/check_maestral_working.rb\n"
    "0 3 * * * /home/cron/code/cron-scripts/create_daily_note.py\n"
)


# ---------------------------------------------------------------- a registry not found


def test_a_missing_registry_names_the_folder_looked_in_and_how_to_name_another(
    tmp_path: Path,
) -> None:
    done = tickq("sync", cwd=tmp_path)
    assert done.returncode == 2, (done.stdout, done.stderr)
    [line, *_] = done.stderr.splitlines()
    assert "registry.toml: file not found" in line, line
    assert f"in {tmp_path}" in line, line
    assert "--registry" in line and "TICKQ_REGISTRY" in line, line
    assert "Traceback" not in done.stderr


# ---------------------------------------------------------------- a byte order mark


def test_a_registry_saved_with_a_bom_is_read_as_without_it(tmp_path: Path, db_url: str) -> None:
    # examples/demo/registry.toml as Notepad's "UTF-8 with BOM" saves it.
    folder = tmp_path / "demo"
    shutil.copytree(REPO / "examples" / "demo", folder)
    registry = folder / "registry.toml"
    registry.write_bytes(BOM + registry.read_bytes())
    done = tickq("sync", "--registry", str(registry), "--database-url", db_url)
    assert done.returncode == 0, done.stderr
    kinds = tomllib.loads((REPO / "examples" / "demo" / "registry.toml").read_text())["kinds"]
    assert all(name in done.stdout for name in kinds), done.stdout


def test_a_crontab_saved_with_a_bom_is_read_line_by_line_as_cron_reads_it(
    tmp_path: Path,
) -> None:
    crontab = tmp_path / "crontab"
    crontab.write_bytes(BOM + REAL_CRONTAB.encode())
    done = tickq("legacy", "import", str(crontab), "--registry", str(tmp_path / "r.toml"))
    assert done.returncode == 0, done.stderr
    assert "glob" not in done.stderr and "\ufeff" not in done.stdout + done.stderr
    assert f"{crontab}:1: left as it is: sets variables" in done.stderr, done.stderr
    kinds = tomllib.loads(done.stdout)["kinds"]
    assert {k["legacy"] for k in kinds.values()} == {
        line for line in REAL_CRONTAB.splitlines() if line[:1] in ("*", "0")}
    assert [k["every"] for k in kinds.values() if "every" in k] == ["10m"]
