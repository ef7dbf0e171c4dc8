"""Agents on a plain install (`pip install -e .`, without the `agents` extra, so no httpx): one
line that names what is missing and the pip command, at `agent add`, `sync` and `check` (a
warning; nothing else fails) and as the run's output of `agent run` (never a traceback).

The plain install is a real Python: a venv of its own whose `import httpx` fails, that finds
tickq and its other dependencies through a .pth file. Its interpreter is the one `tickq` runs
with, so the default agent runner (`python -m tickq.agents`) runs on it too.
"""

from __future__ import annotations

import os
import site
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest
from test_agents import KEY, KEY_ENV, write_registry

REPO = Path(__file__).resolve().parent.parent
NOWHERE = "http://127.0.0.1:9/v1"  # never reached: the run ends before any model call


@pytest.fixture(scope="module")
def plain_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("plain-venv")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True)
    python = folder / "bin" / "python"
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True, capture_output=True, text=True).stdout.strip()
    own = Path(purelib)
    (own / "httpx.py").write_text('raise ImportError("No module named \'httpx\'")\n')
    (own / "tickq-deps.pth").write_text(
        "\n".join([str(REPO / "python_runner"), *site.getsitepackages()]) + "\n")
    probe = subprocess.run([str(python), "-c", "import tickq.cli, jsonschema, psycopg"],
                           capture_output=True, text=True)
    assert probe.returncode == 0, probe.stderr
    assert subprocess.run([str(python), "-c", "import httpx"],
                          capture_output=True).returncode != 0
    return python


def plain_tickq(python: Path, folder: Path, db_url: str, *args: str):
    env = {k: v for k, v in os.environ.items()
           if k not in ("DATABASE_URL", "TICKQ_REGISTRY", "PYTHONPATH")}
    env[KEY_ENV] = KEY
    return subprocess.run(
        [str(python), "-m", "tickq", *args, "--registry", str(folder / "registry.toml"),
         "--database-url", db_url],
        cwd=folder, env=env, capture_output=True, text=True, timeout=120,
    )


def _the_line(stderr: str) -> str:
    lines = [ln for ln in stderr.splitlines() if "httpx" in ln]
    assert len(lines) == 1, stderr
    return lines[0]


def _names_the_fix(line: str, python: Path) -> None:
    assert "httpx" in line and "agents" in line, line
    assert f"{python} -m pip install -e '{REPO}[agents]'" in line, line


def test_a_plain_install_says_what_agents_lack_before_and_at_the_run(
    plain_python: Path, tmp_path: Path, db_url: str
) -> None:
    write_registry(tmp_path, NOWHERE)

    added = plain_tickq(plain_python, tmp_path, db_url, "agent", "add", "brief", "--prompt",
                        "Summarise the deals.", "--every", "1h")
    assert added.returncode == 0, added.stderr
    assert "added agent brief" in added.stdout
    _names_the_fix(_the_line(added.stderr), plain_python)

    synced = plain_tickq(plain_python, tmp_path, db_url, "sync")
    assert synced.returncode == 0, synced.stderr
    # sync's events are its log lines, on stdout
    line = _the_line(synced.stdout + synced.stderr)
    assert "WARNING agents.cannot_run" in line, line
    _names_the_fix(line, plain_python)

    checked = plain_tickq(plain_python, tmp_path, db_url, "check")
    assert checked.returncode == 0, (checked.stdout, checked.stderr)
    _names_the_fix(_the_line(checked.stderr), plain_python)

    ran = plain_tickq(plain_python, tmp_path, db_url, "agent", "run", "brief")
    assert ran.returncode == 1, (ran.stdout, ran.stderr)
    assert "Traceback" not in ran.stdout + ran.stderr
    with psycopg.connect(db_url, autocommit=True) as conn:
        output = conn.execute(
            "SELECT output_tail FROM tickq.job_run"
            " WHERE kind = 'agent.brief'").fetchone()[0]
    lines = output.strip().splitlines()
    assert len(lines) == 1, output
    _names_the_fix(lines[0], plain_python)


def test_a_plain_install_without_agents_says_nothing_of_httpx(
    plain_python: Path, tmp_path: Path, db_url: str
) -> None:
    (tmp_path / "registry.toml").write_text(
        '[kinds.a]\ncommand = ["true"]\nevery = "1h"\ntimeout = "30s"\n')

    synced = plain_tickq(plain_python, tmp_path, db_url, "sync")

    assert synced.returncode == 0, synced.stderr
    assert "httpx" not in synced.stderr + synced.stdout
