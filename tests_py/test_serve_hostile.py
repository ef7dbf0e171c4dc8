"""`tickq serve` against hostile and careless clients: real sockets on 127.0.0.1, a real
`tickq serve` subprocess and a real PostgreSQL. Counts of descriptors and threads are read
from /proc/PID."""

from __future__ import annotations

import contextlib
import os
import re
import resource
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from psycopg import conninfo, sql

REPO = Path(__file__).resolve().parent.parent
WAIT = 60.0  # the longest any one answer may take before the test calls it lost


def _serve(url: str, *extra: str, prefix: tuple[str, ...] = ()) -> tuple[subprocess.Popen, int]:
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    env["PYTHONPATH"] = str(REPO / "python_runner")
    proc = subprocess.Popen(
        [*prefix, sys.executable, "-m", "tickq.cli", "serve", "--port", "0",
         "--database-url", url, *extra],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    line = proc.stdout.readline()
    match = re.search(r"http://([\d.]+):(\d+)/", line)
    assert match, line + (proc.stderr.read() if proc.poll() is not None else "")
    return proc, int(match.group(2))


@pytest.fixture
def served(db_url: str) -> Iterator[tuple[subprocess.Popen, int]]:
    proc, port = _serve(db_url)
    yield proc, port
    _stop(proc)


def _stop(proc: subprocess.Popen) -> str:
    proc.terminate()
    try:
        _out, err = proc.communicate(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
        _out, err = proc.communicate()
    return err


def _ask(port: int, request: bytes, timeout: float = WAIT) -> bytes:
    """Send `request` raw and read the whole answer (the server closes after it)."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(request)
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


def _get(port: int, host: str | None = None, target: str = "/") -> tuple[int, bytes]:
    host = host if host is not None else f"127.0.0.1:{port}"
    answer = _ask(port, f"GET {target} HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
    head, _, body = answer.partition(b"\r\n\r\n")
    status = re.match(rb"HTTP/1\.[01] (\d{3}) ", head)
    assert status, answer[:200]
    return int(status.group(1)), body


def _fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def _threads(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(re.search(r"^Threads:\s+(\d+)", status, re.M).group(1))


def _settles(what, want: int, within: float = 30.0) -> int:
    deadline = time.monotonic() + within
    while (now := what()) > want and time.monotonic() < deadline:
        time.sleep(0.2)
    return now


def test_200_clients_at_once_each_get_the_page(served: tuple[subprocess.Popen, int]) -> None:
    proc, port = served
    results: list[object] = [None] * 200

    def one(i: int) -> None:
        try:
            results[i] = _get(port)[0]
        except OSError as exc:
            results[i] = repr(exc)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(200)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(WAIT * 2)
    assert results == [200] * 200, {repr(r) for r in results}
    err = _stop(proc)
    assert "Traceback" not in err, err


def test_slow_and_idle_clients_are_closed_and_leave_nothing(
    served: tuple[subprocess.Popen, int]
) -> None:
    proc, port = served
    assert _get(port)[0] == 200  # the pool and the first render are up
    fds, threads = _fds(proc.pid), _threads(proc.pid)
    idle = [socket.create_connection(("127.0.0.1", port)) for _ in range(60)]
    slow = [socket.create_connection(("127.0.0.1", port)) for _ in range(60)]
    for sock in slow:
        sock.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")
    try:
        for _ in range(3):  # a header line every few seconds never completes the request
            time.sleep(3)
            for sock in slow:
                with contextlib.suppress(OSError):
                    sock.sendall(b"X-Slow: 1\r\n")
        assert _get(port)[0] == 200, "slow clients do not hold the page"
        for sock in idle + slow:  # the server closes each of them itself, by its deadline
            sock.settimeout(WAIT)
            try:
                while sock.recv(4096):
                    pass
            except ConnectionResetError:
                pass
    finally:
        for sock in idle + slow:
            sock.close()
    assert _settles(lambda: _fds(proc.pid), fds) <= fds
    assert _settles(lambda: _threads(proc.pid), threads) <= threads


def test_1100_idle_connections_under_1024_descriptors_do_not_stop_the_page(
    db_url: str,
) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < 1300:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 4096), hard))
    proc, port = _serve(db_url, prefix=("prlimit", "--nofile=1024"))
    held: list[socket.socket] = []
    try:
        for _ in range(1100):
            held.append(socket.create_connection(("127.0.0.1", port), timeout=WAIT))
        for _ in range(3):
            assert _get(port)[0] == 200
        cpu = _cpu_seconds(proc.pid)
        time.sleep(2)
        assert _cpu_seconds(proc.pid) - cpu < 1.0, "held connections make serve spin"
    finally:
        for sock in held:
            sock.close()
        err = _stop(proc)
    assert "Traceback" not in err, err


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


ODD = [
    b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\n\r\nhello",
    b"PUT / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100000\r\n\r\n" + b"x" * 100000,
    b"DELETE / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
    b"OPTIONS * HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
    b"GET /../../etc/passwd HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
    b"GET /" + b"a" * 70000 + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
    b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n" + b"".join(
        b"X-H%d: v\r\n" % i for i in range(200)) + b"\r\n",
    b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + os.urandom(64) + b"\r\n\r\n",
    b"GET / HTTP/9.9\r\n\r\n",
    b"\r\n\r\n",
]


def test_a_burst_of_odd_requests_leaves_the_next_get_answered(
    served: tuple[subprocess.Popen, int]
) -> None:
    proc, port = served
    for _ in range(3):
        for request in ODD:
            try:
                answer = _ask(port, request, timeout=WAIT)
            except ConnectionResetError:
                continue
            assert not answer or re.match(rb"HTTP/1\.[01] [45]\d\d ", answer), answer[:100]
    assert _get(port)[0] == 200
    err = _stop(proc)
    assert "Traceback" not in err, err


def test_a_host_that_is_not_ours_is_refused(db_url: str) -> None:
    proc, port = _serve(db_url, "--allowed-host", "status.example.org")
    try:
        assert _get(port, f"127.0.0.1:{port}")[0] == 200
        assert _get(port, f"localhost:{port}")[0] == 200
        assert _get(port, "status.example.org")[0] == 200
        for host in ("rebind.attacker.example", f"rebind.attacker.example:{port}",
                     "127.0.0.1.attacker.example", "status.example.org.evil"):
            status, body = _get(port, host)
            assert status in (400, 421), (host, status)
            assert b"kind-row" not in body and body.count(b"\n") == 1, body
        status, _ = _get(port, target="http://rebind.attacker.example/")
        assert status in (400, 421)
        missing = _ask(port, b"GET / HTTP/1.1\r\n\r\n")
        assert re.match(rb"HTTP/1\.[01] 400 ", missing), missing[:100]
    finally:
        _stop(proc)


def test_a_database_that_refuses_is_a_503_in_one_line(db_url: str) -> None:
    role = f"tq_serve_{uuid.uuid4().hex[:8]}"
    password = uuid.uuid4().hex
    with psycopg.connect(db_url, autocommit=True) as admin:
        admin.execute(sql.SQL("CREATE ROLE {} LOGIN PASSWORD {} IN ROLE {}").format(
            sql.Identifier(role), sql.Literal(password),
            sql.Identifier(admin.info.user)))
    try:
        url = conninfo.make_conninfo(db_url, user=role, password=password)
        proc, port = _serve(url)
        try:
            assert _get(port)[0] == 200
            with psycopg.connect(db_url, autocommit=True) as admin:
                admin.execute(sql.SQL("ALTER ROLE {} CONNECTION LIMIT 0").format(
                    sql.Identifier(role)))
            for _ in range(3):
                status, body = _get(port)
                assert status == 503, body[:300]
                text = body.decode()
                assert text.count("\n") == 1 and "Traceback" not in text, text
                assert "too many connections" in text, text
            with psycopg.connect(db_url, autocommit=True) as admin:
                admin.execute(sql.SQL("ALTER ROLE {} CONNECTION LIMIT -1").format(
                    sql.Identifier(role)))
            assert _get(port)[0] == 200
        finally:
            err = _stop(proc)
        assert "Traceback" not in err, err
    finally:
        with psycopg.connect(db_url, autocommit=True) as admin:
            admin.execute(sql.SQL("DROP ROLE {}").format(sql.Identifier(role)))
