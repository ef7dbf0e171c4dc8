"""A dispatcher that cannot write its queue claims nothing, due or not: a tick against a database
that is read-only (`default_transaction_read_only = on`: a replica after a misdirected failover,
a primary gone read-only) exits 3 with one line naming the cause, so the timer's own status
shows it; it runs nothing. Commands that only read (`status`) still answer."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import psycopg
import pytest
from processes import tickq

READ_ONLY = "the database is read-only"


def _registry(folder: Path, due: bool) -> Path:
    marker = folder / "ran"
    at = (datetime.now(UTC) + timedelta(hours=12)).strftime("%H:%M")
    path = folder / "registry.toml"
    path.write_text(f"""\
[kinds.work]
command = ["touch", "{marker}"]
{'every = "1h"' if due else f'at = ["{at}"]'}
timeout = "30s"
""")
    return path


def _read_only(db_url: str) -> None:
    with psycopg.connect(db_url, autocommit=True) as conn:
        (name,) = conn.execute("SELECT current_database()").fetchone()
        conn.execute(f'ALTER DATABASE "{name}" SET default_transaction_read_only = on')


@pytest.mark.parametrize("due", [False, True], ids=["nothing_due", "a_kind_due"])
def test_a_tick_against_a_read_only_database_exits_3_in_one_line(
    db_url: str, tmp_path: Path, due: bool
) -> None:
    registry = _registry(tmp_path, due)
    first = tickq("tick", "--registry", str(registry), "--database-url", db_url)
    assert first.returncode == 0, first.stderr
    (tmp_path / "ran").unlink(missing_ok=True)
    with psycopg.connect(db_url, autocommit=True) as conn:
        conn.execute("UPDATE tickq.job_kind SET due_at = now() - interval '1 minute'"
                     " WHERE %s", (due,))
        (ticks,) = conn.execute("SELECT count(*) FROM tickq.dispatcher_tick").fetchone()
    _read_only(db_url)

    done = tickq("tick", "--registry", str(registry), "--database-url", db_url)

    assert done.returncode == 3, done.stdout + done.stderr
    ending = [line for line in done.stderr.splitlines() if line.startswith("tickq: ")]
    assert len(ending) == 1 and READ_ONLY in ending[0], done.stderr
    assert "default_transaction_read_only" in ending[0]
    assert "Traceback" not in done.stderr + done.stdout
    assert not (tmp_path / "ran").exists()
    with psycopg.connect(db_url, autocommit=True) as conn:
        (after,) = conn.execute("SELECT count(*) FROM tickq.dispatcher_tick").fetchone()
        (running,) = conn.execute("SELECT count(*) FROM tickq.job_run"
                                  " WHERE outcome = 'running'").fetchone()
    assert (after, running) == (ticks, 0)
    seen = tickq("status", "--registry", str(registry), "--database-url", db_url)
    assert seen.returncode == 0, seen.stderr
    assert "work" in seen.stdout


def test_a_session_gone_read_only_unannounced_ends_the_tick_in_one_line(
    db_url: str, tmp_path: Path
) -> None:
    """A pooler passes on no `default_transaction_read_only` at login: the first write's
    SQLSTATE 25006 ends the tick the same way, never as a warning and exit 0."""
    from tickq.db.errors import QueueReadOnly, exit_of
    from tickq.dispatch.tick import Dispatcher
    from tickq.log import EventLog
    from tickq.registry import load_registry

    registry = load_registry(_registry(tmp_path, due=False))
    log = tmp_path / "log"
    with open(log, "w") as stream:
        queue = Dispatcher(db_url, registry, EventLog("text", stream))
        try:
            queue.migrate(sync=True)
            with psycopg.connect(db_url, autocommit=True) as conn:  # housekeeping too
                conn.execute("UPDATE tickq.job_kind SET due_at = 'infinity'")
            queue.link.connection().execute("SET default_transaction_read_only = on")
            with pytest.raises(QueueReadOnly) as raised:
                queue.tick()
        finally:
            queue.close()
    status, lines = exit_of(raised.value)  # type: ignore[misc]
    assert status == 3 and len(lines) == 1, lines
    assert lines[0].startswith(READ_ONLY) and "read-only transaction" in lines[0], lines
    assert "tick.unrecorded" not in log.read_text()
