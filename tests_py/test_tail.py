"""A full output tail keeps its "bytes omitted" header all the way into job_run.output_tail,
with tickq's own notes after it (real tick, real PostgreSQL)."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import psycopg

from tickq.dispatch.tick import Dispatcher
from tickq.log import EventLog
from tickq.registry import load_registry


def test_a_full_tail_is_stored_with_its_header_and_notes(tmp_path: Path, db_url: str) -> None:
    registry = tmp_path / "registry.toml"
    code = ("import sys, time; sys.stdout.write('y' * 300000 + 'LAST'); sys.stdout.flush();"
            " time.sleep(30)")
    registry.write_text(f"""\
[kinds.loud]
command = [{sys.executable!r}, "-c", {code!r}]
every = "1h"
timeout = "2s"
""")
    dispatcher = Dispatcher(db_url, load_registry(registry), EventLog("text", io.StringIO()),
                            grace=0.5)
    dispatcher.migrate()
    dispatcher.tick()
    dispatcher.close()
    with psycopg.connect(db_url) as conn:
        [tail] = conn.execute(
            "SELECT output_tail FROM tickq.job_run WHERE kind = 'loud'").fetchone()
    assert len(tail) <= 65536
    assert tail.startswith("[... ") and " bytes omitted ...]\n" in tail[:60], tail[:80]
    assert "yLAST\n[tickq: timed out after 2s" in tail
    omitted = int(tail[5:].split(" ", 1)[0])
    body = tail[tail.index("]\n") + 2 : tail.index("LAST") + 4]
    assert omitted + len(body) == 300004  # every byte is either kept or counted
