"""A real chat-completions server on 127.0.0.1 for the agent tests: it replays a script.

Each POST to /v1/chat/completions takes the next step of the script (or asks a function for
one): a completion to return, an HTTP error, a body that is not JSON, or a stall. Every request
is kept (headers and JSON body) so tests can check what the runner sent.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Step = dict[str, Any]


def answer(text: str, usage: dict[str, int] | None = None) -> Step:
    return {"completion": {
        "id": "chatcmpl-test", "object": "chat.completion", "model": "test-model",
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": text}}],
        "usage": usage or {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }}


def tool_call(name: str, arguments: dict[str, Any] | str, call_id: str = "call_1") -> Step:
    args = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return {"completion": {
        "id": "chatcmpl-test", "object": "chat.completion", "model": "test-model",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
            "role": "assistant", "content": None,
            "tool_calls": [{"id": call_id, "type": "function",
                            "function": {"name": name, "arguments": args}}]}}],
        "usage": {"prompt_tokens": 12, "completion_tokens": 7, "total_tokens": 19},
    }}


def error(status: int, message: str) -> Step:
    return {"status": status, "body": json.dumps({"error": {"message": message}})}


def raw(body: str) -> Step:
    return {"status": 200, "body": body}


def stall(seconds: float) -> Step:
    return {"stall": seconds}


def raw_bytes(data: bytes) -> Step:
    """A 200 whose body is `data` as it is (built by the test: huge, deep, odd)."""
    return {"status": 200, "data": data}


def trickle(length: int = 1000, every: float = 1.0) -> Step:
    """Headers promising `length` bytes, then one byte every `every` seconds."""
    return {"trickle": (length, every)}


def huge(size: int) -> Step:
    """A 200 of `size` bytes (a JSON string's worth), written a MiB at a time."""
    return {"huge": size}


@dataclass
class ChatServer:
    script: list[Step] | Callable[[int, dict[str, Any]], Step]
    requests: list[dict[str, Any]] = field(default_factory=list)
    _server: ThreadingHTTPServer | None = None

    @property
    def base_url(self) -> str:
        assert self._server is not None
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def __enter__(self) -> ChatServer:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length) or b"{}")
                index = len(owner.requests)
                owner.requests.append({"path": self.path, "headers": dict(self.headers),
                                       "body": body})
                if callable(owner.script):
                    step = owner.script(index, body)
                elif index < len(owner.script):
                    step = owner.script[index]
                else:
                    step = error(500, "script exhausted")
                if "stall" in step:
                    time.sleep(step["stall"])
                    return
                if "trickle" in step or "huge" in step:
                    self._stream(step)
                    return
                if "data" in step:
                    status, data = 200, step["data"]
                elif "completion" in step:
                    status, data = 200, json.dumps(step["completion"]).encode()
                else:
                    status, data = step["status"], step["body"].encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _stream(self, step: Step) -> None:
                length, every = step.get("trickle") or (step["huge"], 0.0)
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(length))
                self.end_headers()
                chunk = b" " if every else b" " * (1 << 20)
                try:
                    for _ in range(0, length, len(chunk)):
                        self.wfile.write(chunk)
                        self.wfile.flush()
                        time.sleep(every)
                except OSError:
                    return  # the client stopped reading: what the test wants

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: Any) -> None:
        assert self._server is not None
        self._server.shutdown()
        self._server.server_close()
