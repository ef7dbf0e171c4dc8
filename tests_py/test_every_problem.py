"""Every value problem of every kind is listed at once (issue 20, item 12): a kind with three
typos is refused by one `tickq sync` (a real subprocess) naming all three, so the user fixes
the file in one round instead of three."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
THREE_TYPOS = ('[kinds.report]\ncommand = ["true"]\nevery = "5m"\ntimeout = "0s"\nretries = -1\n'
               'priority = "urgentt"\n')


def sync(path: Path, url: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("DATABASE_URL", "TICKQ_REGISTRY", "TICKQ_LOG_FORMAT")}
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(REPO / "python_runner"), os.environ.get("PYTHONPATH")) if p)
    return subprocess.run(
        [sys.executable, "-m", "tickq.cli", "sync", "--registry", str(path), "--database-url", url],
        env=env, text=True, capture_output=True, timeout=120, check=False)


def test_one_sync_names_every_bad_value_of_one_kind(tmp_path: Path, db_url: str) -> None:
    path = tmp_path / "registry.toml"
    path.write_text(THREE_TYPOS)
    result = sync(path, db_url)
    assert result.returncode == 2, (result.returncode, result.stdout, result.stderr)
    assert "Traceback" not in result.stderr, result.stderr
    stderr = result.stderr
    assert 'kind "report", key "timeout": must be a duration from 1s to' in stderr, stderr
    assert 'kind "report", key "retries": must be a whole number from 0 to' in stderr, stderr
    assert ('kind "report", key "priority": must be one of urgent, high, normal, low, '
            'got "urgentt"') in stderr, stderr


def test_problems_of_two_kinds_come_together(tmp_path: Path, db_url: str) -> None:
    path = tmp_path / "registry.toml"
    path.write_text(THREE_TYPOS + '\n[kinds.other]\ncommand = ["true"]\nevery = "0s"\n'
                    'timeout = "8d"\n')
    result = sync(path, db_url)
    assert result.returncode == 2, (result.returncode, result.stdout, result.stderr)
    for key in ('"report", key "timeout"', '"report", key "retries"', '"report", key "priority"',
                '"other", key "every"', '"other", key "timeout"'):
        assert f"kind {key}" in result.stderr, (key, result.stderr)
    assert "5 problem(s)" in result.stderr, result.stderr
