"""Dead-man check-ins (the healthchecks.io protocol) against a real receiver on 127.0.0.1 that
records each request: a tick that ends well, one that fails, a kind that ends ok, one that
exits 3, one killed at its timeout; a receiver that never answers and one that answers 500 (the
tick still ends, each check-in tried at most twice, one log line). The URL's secret part is in
no log line, no database row and no page."""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import psycopg
import pytest
from processes import tickq

REPO = Path(__file__).resolve().parent.parent


class Receiver:
    """Records (path, body) of every POST. /ok/... answers 200, /err/... 500, /hang/... never."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, str]] = []
        self.content_types: list[str] = []
        self.release = threading.Event()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length).decode("utf-8", "replace")
                receiver.requests.append((self.path, body))
                receiver.content_types.append(self.headers.get("Content-Type", ""))
                if self.path.startswith("/hang/"):
                    receiver.release.wait(60)
                    return
                self.send_response(500 if self.path.startswith("/err/") else 200)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"OK")

            def log_message(self, *_args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def paths(self, secret: str) -> list[str]:
        """The check-ins of one URL, in order, with the URL's own part cut off."""
        return [p.split(secret, 1)[1] or "/" for p, _ in self.requests if secret in p]

    def bodies(self, secret: str) -> list[str]:
        return [b for p, b in self.requests if secret in p]

    def close(self) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    r = Receiver()
    yield r
    r.close()


def _secret() -> str:
    return uuid.uuid4().hex


def _registry(tmp_path: Path, settings: str, kinds: str) -> Path:
    path = tmp_path / "registry.toml"
    path.write_text(f'[settings]\nslots = 3\n{settings}\n{kinds}')
    return path


def _nowhere_in_the_database(url: str, secrets: list[str]) -> None:
    with psycopg.connect(url) as conn:
        tables = [t for (t,) in conn.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = 'tickq'").fetchall()]
        for table in tables:
            rows = conn.execute(f"SELECT t::text FROM tickq.{table} AS t").fetchall()
            for (row,) in rows:
                for secret in secrets:
                    assert secret not in row, (table, row)


def test_a_tick_and_each_run_check_in(db_url: str, tmp_path: Path, receiver: Receiver) -> None:
    tick, fine, broken, slow = (_secret() for _ in range(4))
    base = f"{receiver.base}/ok"
    registry = _registry(tmp_path, f'ping_url = "{base}/{tick}"', f"""
[kinds.fine]
command = ["sh", "-c", "echo all fine"]
every = "1h"
timeout = "10s"
ping_url = "{base}/{fine}"

[kinds.broken]
command = ["sh", "-c", "echo boom; exit 3"]
every = "1h"
timeout = "10s"
ping_url = "{base}/{broken}"

[kinds.slow]
command = ["sleep", "30"]
every = "1h"
timeout = "1s"
ping_url = "{base}/{slow}/"
""")
    assert tickq("sync", "--registry", str(registry), "--database-url", db_url).returncode == 0
    with psycopg.connect(db_url, autocommit=True) as conn:
        conn.execute("UPDATE tickq.job_kind SET due_at = now() - interval '1 minute'")
    result = tickq("tick", "--registry", str(registry), "--database-url", db_url)
    assert result.returncode == 0, result.stderr + result.stdout

    assert receiver.paths(tick) == ["/start", "/"]
    assert receiver.bodies(tick)[1] == "tickq tick: exit 0\n"
    assert receiver.paths(fine) == ["/start", "/"]
    assert "all fine" in receiver.bodies(fine)[1]
    assert receiver.paths(broken) == ["/start", "/3"]
    assert "boom" in receiver.bodies(broken)[1]
    assert receiver.paths(slow) == ["/start", "/fail"]

    secrets = [tick, fine, broken, slow]
    shown = [result.stdout + result.stderr]
    for args in (("status", "--json", "--wide"), ("explain", "fine", "--json"),
                 ("history", "fine", "--json"), ("metrics",), ("sync",)):
        seen = tickq(*args, "--registry", str(registry), "--database-url", db_url)
        assert seen.returncode == 0, (args, seen.stderr)
        shown.append(seen.stdout + seen.stderr)
    page = tmp_path / "page.html"
    assert tickq("report", "--html", str(page), "--database-url", db_url).returncode == 0
    shown.append(page.read_text())
    for text in shown:
        for secret in secrets:
            assert secret not in text
    _nowhere_in_the_database(db_url, secrets)


def test_a_failing_tick_checks_in_as_failed(tmp_path: Path, receiver: Receiver) -> None:
    secret = _secret()
    registry = _registry(tmp_path, f'ping_url = "{receiver.base}/ok/{secret}"', """
[kinds.fine]
command = ["true"]
every = "1h"
timeout = "10s"
""")
    # nothing listens on port 1: the database cannot be reached, the tick exits 3
    result = tickq("tick", "--registry", str(registry),
                   "--database-url", "postgresql://tickq@127.0.0.1:1/tickq")
    assert result.returncode == 3, result.stderr
    assert receiver.paths(secret) == ["/start", "/fail"]
    assert receiver.bodies(secret)[1].startswith("tickq tick: ")
    assert secret not in result.stdout + result.stderr


@pytest.mark.parametrize("answer", ["hang", "err"])
def test_a_receiver_that_fails_never_fails_the_tick(db_url: str, tmp_path: Path,
                                                     receiver: Receiver, answer: str) -> None:
    secret, kind_secret = _secret(), _secret()
    registry = _registry(
        tmp_path, f'ping_url = "{receiver.base}/{answer}/{secret}"\nping_timeout = "1s"', f"""
[kinds.fine]
command = ["sh", "-c", "echo fine"]
every = "1h"
timeout = "10s"
ping_url = "{receiver.base}/{answer}/{kind_secret}"
""")
    assert tickq("sync", "--registry", str(registry), "--database-url", db_url).returncode == 0
    with psycopg.connect(db_url, autocommit=True) as conn:
        conn.execute("UPDATE tickq.job_kind SET due_at = now() - interval '1 minute'")
    # A check-in waits 1s and is tried twice; the tick waits for them at most 2.5s at its end.
    result = tickq("tick", "--registry", str(registry), "--database-url", db_url, timeout=30)
    assert result.returncode == 0, result.stderr + result.stdout
    log = result.stdout + result.stderr
    failed = [line for line in log.splitlines() if "ping.failed" in line]
    assert failed and all(f"{receiver.base.split(':')[0]}:" in line or "127.0.0.1" in line
                          for line in failed)
    if answer == "err":
        assert all("HTTP 500" in line for line in failed)
        assert receiver.paths(secret) == ["/start", "/start", "/", "/"]
    else:
        assert receiver.paths(secret)[:2] == ["/start", "/start"]  # tried twice, no more
        assert receiver.paths(secret).count("/start") == 2
    with psycopg.connect(db_url) as conn:
        (outcome,) = conn.execute("SELECT outcome::text FROM tickq.job_run "
                                  "WHERE kind = 'fine'").fetchone()
    assert outcome == "ok"
    assert secret not in log and kind_secret not in log


def test_a_url_that_is_not_http_is_refused_without_being_shown(tmp_path: Path,
                                                              pg_server_url: str) -> None:
    # pg_server_url: the URL rule is SQL's (registry_problems), judged in a scratch database of
    # the test server (TICKQ_SCRATCH_URL, conftest.py)
    secret = _secret()
    registry = _registry(tmp_path, f'ping_url = "ftp://example.com/{secret}"', f"""
[kinds.fine]
command = ["true"]
every = "1h"
timeout = "10s"
ping_url = "hc-ping.com/{secret}"
""")
    result = tickq("check", "--registry", str(registry))
    assert result.returncode == 2, result.stderr
    assert result.stderr.count("must be an http:// or https:// URL") == 2, result.stderr
    assert secret not in result.stdout + result.stderr


def test_alerts_go_to_the_webhook_as_json_with_a_text(db_url: str, tmp_path: Path,
                                                       receiver: Receiver) -> None:
    secret = _secret()
    registry = _registry(tmp_path, f'alert_url = "{receiver.base}/ok/{secret}"\nalert_after = 1',
                         """
[kinds.broken]
command = ["sh", "-c", "echo boom; exit 3"]
every = "1h"
timeout = "10s"
""")
    assert tickq("sync", "--registry", str(registry), "--database-url", db_url).returncode == 0
    with psycopg.connect(db_url, autocommit=True) as conn:
        conn.execute("UPDATE tickq.job_kind SET due_at = now() - interval '1 minute'")
    result = tickq("tick", "--registry", str(registry), "--database-url", db_url)
    assert result.returncode == 0, result.stderr + result.stdout
    [body] = receiver.bodies(secret)
    assert receiver.content_types == ["application/json"]
    doc = json.loads(body)
    assert doc["text"] == "tickq: broken failed 1 time(s) in a row, last outcome failed"
    assert (doc["kind"], doc["event"], doc["condition"]) == ("broken", "failing", "failing")
    assert "boom" in doc["output_tail"]
    assert secret not in result.stdout + result.stderr
    _nowhere_in_the_database(db_url, [secret])
