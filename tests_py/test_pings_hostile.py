"""Check-ins and alert webhooks against hostile receivers on 127.0.0.1, each started here: one
that redirects to an FTP port, to another port and to itself, one that trickles its answer, one
that closes mid-answer, and URLs with a user and password in them.

tickq follows no redirect (a 3xx is a failed check-in, logged with the target's scheme and
host only), sends a URL's `user:password@` as an `Authorization: Basic` header (never as part
of a host name to look up), and a hostile receiver never fails a tick nor holds it past two
`ping_timeout`s. No password and no URL secret reaches a log line or a row."""

from __future__ import annotations

import base64
import json
import socket
import threading
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import psycopg
import pytest
from processes import tickq
from test_pings import _nowhere_in_the_database


class Listener:
    """A bare TCP port that counts the connections made to it (the FTP a redirect names)."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.accepted = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.accepted += 1
            conn.close()

    def close(self) -> None:
        self.sock.close()


class Hostile:
    """Records (path, headers) of every request; the first path segment says how to answer."""

    def __init__(self, ftp_port: int = 0, other_port: int = 0) -> None:
        self.requests: list[tuple[str, dict[str, str]]] = []
        self.stop = threading.Event()
        hostile = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                hostile.requests.append((self.path, dict(self.headers.items())))
                how = self.path.split("/")[1]
                if how.startswith("to-"):
                    target = {"to-ftp": f"ftp://127.0.0.1:{ftp_port}/LOCATIONSECRET",
                              "to-port": f"http://127.0.0.1:{other_port}/ok/LOCATIONSECRET",
                              "to-self": f"{hostile.base}/ok/LOCATIONSECRET"}[how]
                    self.send_response(302)
                    self.send_header("Location", target)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                self.send_response(200)
                self.send_header("Content-Length", "5000")
                self.end_headers()
                if how == "trickle":  # a byte at a time, each well within the timeout
                    while not hostile.stop.wait(0.3):
                        self.wfile.write(b"x")
                        self.wfile.flush()
                elif how == "cut":  # half an answer, then the connection closes
                    self.wfile.write(b"x" * 100)
                    self.wfile.flush()
                    self.connection.shutdown(socket.SHUT_RDWR)
                else:
                    self.wfile.write(b"x" * 5000)

            do_GET = do_POST  # noqa: N815 - what a 302 turns a POST into

            def log_message(self, *_args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.base = f"http://127.0.0.1:{self.port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def of(self, secret: str) -> list[tuple[str, dict[str, str]]]:
        return [(p.split(secret, 1)[1] or "/", h) for p, h in self.requests if secret in p]

    def close(self) -> None:
        self.stop.set()
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receivers() -> Iterator[tuple[Hostile, Hostile, Listener]]:
    ftp, other = Listener(), Hostile()
    hostile = Hostile(ftp.port, other.port)
    yield hostile, other, ftp
    for r in (hostile, other, ftp):
        r.close()


def _kind(name: str, url: str, command: str = "true") -> str:
    return (f'\n[kinds.{name}]\ncommand = ["sh", "-c", "{command}"]\nevery = "1h"\n'
            f'timeout = "10s"\nping_url = "{url}"\n')


def test_no_redirect_is_followed_and_no_receiver_holds_the_tick(
    db_url: str, tmp_path: Path, receivers: tuple[Hostile, Hostile, Listener]
) -> None:
    hostile, other, ftp = receivers
    s = {name: uuid.uuid4().hex for name in ("ftp", "port", "self", "trickle", "cut", "alert")}
    base = hostile.base
    registry = tmp_path / "registry.toml"
    registry.write_text(
        f'[settings]\nslots = 6\nping_timeout = "1s"\nalert_after = 1\n'
        f'alert_url = "{base}/to-port/{s["alert"]}"\n'
        + _kind("k_ftp", f"{base}/to-ftp/{s['ftp']}")
        + _kind("k_port", f"{base}/to-port/{s['port']}", "exit 4")
        + _kind("k_self", f"{base}/to-self/{s['self']}")
        + _kind("k_trickle", f"{base}/trickle/{s['trickle']}")
        + _kind("k_cut", f"{base}/cut/{s['cut']}"))
    assert tickq("sync", "--registry", str(registry), "--database-url", db_url).returncode == 0
    with psycopg.connect(db_url, autocommit=True) as conn:
        conn.execute("UPDATE tickq.job_kind SET due_at = now() - interval '1 minute'")

    done = tickq("tick", "--registry", str(registry), "--database-url", db_url, timeout=60)

    log = done.stdout + done.stderr
    assert done.returncode == 0, log
    assert ftp.accepted == 0 and other.requests == [], (ftp.accepted, other.requests)
    for name in ("ftp", "port", "self"):  # each check-in asked once, its redirect refused
        assert [p for p, _ in hostile.of(s[name])] == ["/start", "/4" if name == "port" else "/"]
    assert [p for p, _ in hostile.of(s["alert"])] == ["/"]
    refused = [line for line in log.splitlines() if "ping.failed" in line and "302" in line]
    assert len(refused) == 7, log
    assert all("redirect" in line and "not followed" in line for line in refused), refused
    assert any("ftp://127.0.0.1/" in line for line in refused), refused
    # The trickling receiver's check-in is given up at the tick's end, in one line.
    assert "ping.dropped urls=1" in log, log
    assert "LOCATIONSECRET" not in log and "Traceback" not in log
    for secret in s.values():
        assert secret not in log
    with psycopg.connect(db_url) as conn:
        outcomes = dict(conn.execute("SELECT kind, outcome::text FROM tickq.job_run"
                                     " WHERE kind LIKE 'k\\_%'").fetchall())
    assert outcomes == {"k_ftp": "ok", "k_port": "failed", "k_self": "ok", "k_trickle": "ok",
                        "k_cut": "ok"}


def test_a_url_with_a_user_and_password_sends_them_as_basic_auth_and_nowhere_else(
    db_url: str, tmp_path: Path, receivers: tuple[Hostile, Hostile, Listener]
) -> None:
    hostile, _other, _ftp = receivers
    tick_secret, kind_secret, alert_secret = (uuid.uuid4().hex for _ in range(3))
    password = "pw-" + uuid.uuid4().hex[:12]
    netloc = f"watcher:{password}%40x@127.0.0.1:{hostile.port}"
    registry = tmp_path / "registry.toml"
    registry.write_text(
        f'[settings]\nping_url = "http://{netloc}/ok/{tick_secret}"\nalert_after = 1\n'
        f'alert_url = "http://{netloc}/ok/{alert_secret}"\n'
        + _kind("k_auth", f"http://{netloc}/ok/{kind_secret}", "echo out; exit 3"))
    check = tickq("check", "--registry", str(registry), "--database-url", db_url)
    synced = tickq("sync", "--registry", str(registry), "--database-url", db_url)
    assert synced.returncode == 0, synced.stderr
    with psycopg.connect(db_url, autocommit=True) as conn:
        conn.execute("UPDATE tickq.job_kind SET due_at = now() - interval '1 minute'")

    done = tickq("tick", "--registry", str(registry), "--database-url", db_url, timeout=60)

    log = done.stdout + done.stderr
    assert done.returncode == 0, log
    basic = "Basic " + base64.b64encode(f"watcher:{password}@x".encode()).decode()
    for secret, paths in ((tick_secret, ["/start", "/"]), (kind_secret, ["/start", "/3"]),
                          (alert_secret, ["/"])):
        got = hostile.of(secret)
        assert [p for p, _ in got] == paths, (secret, got, log)
        assert all(h.get("Authorization") == basic for _, h in got), got
    alert = [h for _, h in hostile.of(alert_secret)]
    assert alert and alert[0].get("Content-Type") == "application/json"
    assert "ping.failed" not in log, log
    for text in (log, check.stdout + check.stderr, synced.stdout + synced.stderr):
        assert password not in text and "watcher:" not in text
    _nowhere_in_the_database(db_url, [password, "watcher:", tick_secret, kind_secret])
    with psycopg.connect(db_url) as conn:
        (mirror,) = conn.execute("SELECT registry::text FROM tickq.job_kind"
                                 " WHERE name = 'k_auth'").fetchone()
    assert password not in mirror and "watcher" not in json.dumps(mirror)
