"""The HTTP server behind `tickq serve`: one selectors loop and a few render threads, bounded.

The loop alone touches sockets, all non-blocking: it accepts, reads each request head against
a deadline, writes each answer against a deadline and closes. A complete GET of a known path is
handed to a fixed pool of threads that only render; requests for a path whose render is under
way share that render. So a client holds at most one descriptor and never a thread, however
slow, idle or odd it is, and the open connections are bounded below RLIMIT_NOFILE: past the
bound the oldest connection still reading its head is closed to make room.
"""

from __future__ import annotations

import contextlib
import errno
import ipaddress
import queue
import resource
import selectors
import socket
import sys
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from http import HTTPStatus

# (status, headers, body): what a route answers.
Answer = tuple[int, dict[str, str], bytes]
Route = Callable[[], Answer]

MAX_HEAD = 16 * 1024  # request line and headers, bytes
MAX_TARGET = 8 * 1024  # the request line alone; longer is 414
MAX_HEADERS = 100  # more is 431
HEAD_SECONDS = 10.0  # from accept to a whole request head
ANSWER_SECONDS = 60.0  # from a whole head to the last byte of the answer written
LINGER_SECONDS = 2.0  # reading what a client still sends after its answer, before closing
MAX_CONNECTIONS = 256
SPARE_DESCRIPTORS = 64  # left under RLIMIT_NOFILE for the database, the pool and stdio
WORKERS = 4
TEXT = {"Content-Type": "text/plain; charset=utf-8"}


@dataclass(eq=False)
class Conn:
    sock: socket.socket
    deadline: float
    state: str = "read"  # read -> wait -> write -> linger
    data: bytearray = field(default_factory=bytearray)
    head_only: bool = False


def text_answer(status: int, line: str, headers: dict[str, str] | None = None) -> Answer:
    """An answer of one line of text."""
    return status, {**TEXT, **(headers or {})}, (line.rstrip("\n") + "\n").encode()


def connection_bound(wanted: int = MAX_CONNECTIONS) -> int:
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return wanted
    return max(8, min(wanted, soft - SPARE_DESCRIPTORS))


class Hosts:
    """The Host names a request may name: the bound address's own (an IP literal; `localhost`
    too on loopback) and those given. Any other is a name pointed here by someone else's DNS,
    the DNS-rebinding attack, and gets 421."""

    def __init__(self, bound: str, allowed: list[str]) -> None:
        self.ip = ipaddress.ip_address(bound)
        self.names = {_host_name(name) for name in allowed}

    def allows(self, value: str) -> bool:
        name = _host_name(value)
        if name in self.names:
            return True
        if name == "localhost":
            return self.ip.is_loopback
        try:
            ip = ipaddress.ip_address(name)
        except ValueError:
            return False
        if self.ip.is_unspecified:
            return True
        return ip == self.ip or (ip.is_loopback and self.ip.is_loopback)


def _host_name(value: str) -> str:
    value = value.strip().lower()
    if value.startswith("["):  # [v6]:port
        return value[1:].partition("]")[0]
    name, colon, port = value.rpartition(":")
    if colon and port.isdigit() and ":" not in name:
        value = name
    return value.rstrip(".")


def parse_head(head: bytes, hosts: Hosts) -> tuple[str, bool] | Answer:
    """The path a request head asks for and whether it is a HEAD, or the answer refusing it."""
    try:
        lines = head.decode("ascii").split("\r\n")
    except UnicodeDecodeError:
        return text_answer(400, "not an HTTP request")
    parts = lines[0].split(" ")
    if len(parts) != 3 or parts[2] not in ("HTTP/1.0", "HTTP/1.1"):
        return text_answer(400, "not an HTTP/1.x request line")
    method, target, version = parts
    if len(lines) - 1 > MAX_HEADERS:
        return text_answer(431, "too many header lines")
    host_values = []
    for line in lines[1:]:
        name, colon, value = line.partition(":")
        if not colon or not name or name != name.strip():
            return text_answer(400, "a header line without a name")
        if name.lower() == "host":
            host_values.append(value)
    if target.lower().startswith(("http://", "https://")):  # absolute form: its host wins
        authority = target.split("/", 3)[2]
        target = "/" + (target.split("/", 3)[3:] or [""])[0]
        host_values = [authority]
    if len(host_values) > 1 or (not host_values and version == "HTTP/1.1"):
        return text_answer(400, "a request needs one Host header")
    if host_values and not hosts.allows(host_values[0]):
        return text_answer(421, "this server does not answer for that Host name")
    if method not in ("GET", "HEAD"):
        return text_answer(405, "read-only", {"Allow": "GET, HEAD"})
    if not target.startswith("/"):
        return text_answer(400, "the target must be a path")
    return target.split("?", 1)[0], method == "HEAD"


def encode(answer: Answer, head_only: bool) -> bytes:
    status, headers, body = answer
    phrase = HTTPStatus(status).phrase
    lines = [f"HTTP/1.1 {status} {phrase}", "Server: tickq", "Connection: close",
             f"Content-Length: {len(body)}", *(f"{k}: {v}" for k, v in headers.items())]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + (b"" if head_only else body)


class Server:
    """Listens on (host, port) and answers `routes` (path -> render) until `close`."""

    def __init__(self, host: str, port: int, routes: dict[str, Route],
                 allowed_hosts: list[str], workers: int = WORKERS) -> None:
        self.routes = routes
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self.listener = socket.create_server((host, port), family=family, backlog=1024)
        self.listener.setblocking(False)
        self.address = self.listener.getsockname()[:2]
        self.hosts = Hosts(self.address[0], allowed_hosts)
        self.bound = connection_bound()
        self.selector = selectors.DefaultSelector()
        self.selector.register(self.listener, selectors.EVENT_READ, None)
        self.wake_r, self.wake_w = socket.socketpair()
        self.wake_r.setblocking(False)
        self.selector.register(self.wake_r, selectors.EVENT_READ, "wake")
        self.conns: dict[Conn, None] = {}  # in accept order: the first is the oldest
        self.flights: dict[str, list[Conn]] = {}  # path -> who waits for its render
        self.jobs: queue.SimpleQueue[str | None] = queue.SimpleQueue()
        self.done: queue.SimpleQueue[tuple[str, Answer]] = queue.SimpleQueue()
        self.listening_again = 0.0
        self.stopping = False
        self.pool = [threading.Thread(target=self._work, daemon=True) for _ in range(workers)]
        for thread in self.pool:
            thread.start()

    # ------------------------------------------------------------ the render threads

    def _work(self) -> None:
        while (path := self.jobs.get()) is not None:
            try:
                answer = self.routes[path]()
            except Exception:  # a bug in a render: its traceback, and the server goes on
                traceback.print_exc(file=sys.stderr)
                answer = text_answer(500, "the page could not be rendered")
            self.done.put((path, answer))
            try:
                self.wake_w.send(b"x")
            except OSError:
                return

    # ------------------------------------------------------------ the loop

    def serve_forever(self) -> None:
        while not self.stopping:
            now = time.monotonic()
            if self.listening_again and now >= self.listening_again:
                self.listening_again = 0.0
                self.selector.register(self.listener, selectors.EVENT_READ, None)
            for key, events in self.selector.select(timeout=0.25):
                if key.data is None:
                    self._accept()
                elif key.data == "wake":
                    self._answered()
                elif events & selectors.EVENT_WRITE:
                    self._write(key.data)
                else:
                    self._read(key.data)
            self._expire(time.monotonic())

    def _accept(self) -> None:
        for _ in range(64):
            try:
                sock, _addr = self.listener.accept()
            except BlockingIOError:
                return
            except OSError as exc:
                if exc.errno not in (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM):
                    return  # ECONNABORTED and the like: that client is gone
                if not self._evict():
                    self.selector.unregister(self.listener)  # no spinning on a full table
                    self.listening_again = time.monotonic() + 0.1
                return
            if len(self.conns) >= self.bound and not self._evict():
                sock.close()
                continue
            sock.setblocking(False)
            conn = Conn(sock, time.monotonic() + HEAD_SECONDS)
            self.conns[conn] = None
            self.selector.register(sock, selectors.EVENT_READ, conn)

    def _evict(self) -> bool:
        """Close the oldest connection still reading its head; False if there is none."""
        for conn in self.conns:
            if conn.state == "read":
                self._close(conn)
                return True
        return False

    def _read(self, conn: Conn) -> None:
        try:
            chunk = conn.sock.recv(65536)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            chunk = b""
        if not chunk or conn.state == "linger":
            if not chunk:
                self._close(conn)
            return
        conn.data += chunk
        end = conn.data.find(b"\r\n\r\n")
        if end < 0:
            if len(conn.data) > MAX_HEAD:
                too_long = conn.data.find(b"\r\n") < 0 or conn.data.find(b"\r\n") > MAX_TARGET
                self._answer(conn, text_answer(414 if too_long else 431,
                                               "request line too long" if too_long
                                               else "request head too large"))
            return
        head = bytes(conn.data[:end])
        if head.find(b"\r\n") > MAX_TARGET or (head.find(b"\r\n") < 0 and end > MAX_TARGET):
            self._answer(conn, text_answer(414, "request line too long"))
            return
        self._asked(conn, parse_head(head, self.hosts))

    def _asked(self, conn: Conn, asked: tuple[str, bool] | Answer) -> None:
        conn.data = bytearray()
        if len(asked) == 3:
            self._answer(conn, asked)  # type: ignore[arg-type]
            return
        path, conn.head_only = asked  # type: ignore[misc]
        if path not in self.routes:
            self._answer(conn, text_answer(404, "not found"))
            return
        conn.state, conn.deadline = "wait", time.monotonic() + ANSWER_SECONDS
        self.selector.unregister(conn.sock)
        waiting = self.flights.setdefault(path, [])
        if not waiting:
            self.jobs.put(path)
        waiting.append(conn)

    def _answered(self) -> None:
        try:
            while self.wake_r.recv(4096):
                pass
        except BlockingIOError:
            pass
        while not self.done.empty():
            path, answer = self.done.get()
            for conn in self.flights.pop(path, []):
                if conn in self.conns:
                    self._answer(conn, answer)

    def _answer(self, conn: Conn, answer: Answer) -> None:
        conn.data = bytearray(encode(answer, conn.head_only))
        if conn.state == "wait":  # unregistered while its render ran
            self.selector.register(conn.sock, selectors.EVENT_WRITE, conn)
        else:
            conn.deadline = time.monotonic() + ANSWER_SECONDS
            self.selector.modify(conn.sock, selectors.EVENT_WRITE, conn)
        conn.state = "write"
        self._write(conn)

    def _write(self, conn: Conn) -> None:
        try:
            sent = conn.sock.send(conn.data)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            self._close(conn)
            return
        del conn.data[:sent]
        if conn.data:
            return
        try:
            conn.sock.shutdown(socket.SHUT_WR)
        except OSError:
            self._close(conn)
            return
        conn.state, conn.deadline = "linger", time.monotonic() + LINGER_SECONDS
        self.selector.modify(conn.sock, selectors.EVENT_READ, conn)

    def _expire(self, now: float) -> None:
        for conn in [c for c in self.conns if c.deadline <= now]:
            self._close(conn)

    def _close(self, conn: Conn) -> None:
        self.conns.pop(conn, None)
        if conn.state != "wait":
            with contextlib.suppress(KeyError, ValueError):
                self.selector.unregister(conn.sock)
        conn.state = "closed"
        conn.sock.close()

    def close(self) -> None:
        self.stopping = True
        for conn in list(self.conns):
            self._close(conn)
        for _ in self.pool:
            self.jobs.put(None)
        self.selector.close()
        self.listener.close()
        self.wake_r.close()
        self.wake_w.close()
