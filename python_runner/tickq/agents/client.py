"""A chat-completions client (the OpenAI protocol that hosted APIs, Ollama, vLLM and llama.cpp's
server all speak), on httpx, installed with the optional extra `tickq[agents]`.

One call is one turn. Transient failures (429, 5xx, timeouts, a dropped connection, a body that
is not the JSON the protocol promises) are retried with backoff a bounded number of times; then
the call fails with the server's own message. The API key goes into the Authorization header and
nowhere else: error messages are scrubbed of it before they leave this module.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from tickq.agents import bounds

try:
    import httpx
except ImportError:  # a plain install: agents need `pip install tickq[agents]`
    httpx = None  # type: ignore[assignment]

_BACKOFF_BASE = 0.5  # seconds before the second try, doubling per try
_BACKOFF_MAX = 8.0
_RETRY_AFTER_MAX = 30.0
_MESSAGE_MAX = 500  # characters of a server's error message kept


class ModelError(Exception):
    """A model call failed for good (after its retries, or at once for a request the server
    refuses, such as 401 or 404). The message is the server's, without the key."""


@dataclass(frozen=True)
class Completion:
    message: dict[str, Any]  # the assistant message: content and/or tool_calls
    finish_reason: str | None
    usage: dict[str, Any] | None
    attempts: int
    retried: list[str] = field(default_factory=list)  # why earlier tries failed


class ChatClient:
    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None,
        *,
        request_timeout: float,
        attempts: int,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if httpx is None:
            from tickq.agents.extra import missing

            raise ModelError(missing() or "agents need httpx")
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.model = model
        self._key = api_key or None
        self.request_timeout = request_timeout
        self.attempts = max(1, attempts)
        self._sleep = sleep
        # identity: a compressed reply could grow past any bound while it is decoded
        headers = {"Content-Type": "application/json", "Accept-Encoding": "identity"}
        if self._key:
            headers["Authorization"] = f"Bearer {self._key}"
        self._http = httpx.Client(headers=headers, follow_redirects=False)

    def close(self) -> None:
        self._http.close()

    def scrub(self, text: str) -> str:
        """`text` without the API key (a server may echo a request back in an error)."""
        return text.replace(self._key, "[redacted]") if self._key else text

    def complete(
        self, messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]]
    ) -> Completion:
        body: dict[str, Any] = {"model": self.model, "messages": list(messages)}
        if tools:
            body["tools"] = list(tools)
        retried: list[str] = []
        for attempt in range(1, self.attempts + 1):
            wait: float | None = None
            try:
                response, data = self._post(body)
            except httpx.TimeoutException:
                problem = f"no answer within {self.request_timeout:g}s"
            except _Late:
                problem = f"no whole answer within {self.request_timeout:g}s"
            except httpx.TransportError as exc:
                problem = f"cannot reach {self.url}: {exc}"
            else:
                status = response.status_code
                if data is None:  # past the bound: refused at once, never read whole
                    raise ModelError(f"a reply larger than {bounds.REPLY_BYTES >> 20} MiB "
                                     f"(HTTP {status}): refused unread")
                if status == 200:
                    try:
                        return _completion(data, attempt, retried)
                    except ValueError as exc:
                        problem = f"malformed response: {exc}"
                elif status == 429 or status >= 500:
                    problem = f"HTTP {status}: {_server_message(response, data)}"
                    wait = _retry_after(response)
                else:
                    message = _server_message(response, data)
                    raise ModelError(self.scrub(f"HTTP {status}: {message}"))
            retried.append(self.scrub(problem))
            if attempt < self.attempts:
                self._sleep(wait if wait is not None
                            else min(_BACKOFF_MAX, _BACKOFF_BASE * 2 ** (attempt - 1)))
        raise ModelError(f"{retried[-1]} (after {self.attempts} tries)")


    def _post(self, body: dict[str, Any]) -> tuple[Any, bytes | None]:
        """The response and its body, read within one deadline for the whole request (a
        server trickling a byte a second meets it) and up to REPLY_BYTES (None past them)."""
        deadline = time.monotonic() + self.request_timeout
        with self._http.stream("POST", self.url, json=body,
                               timeout=self.request_timeout) as response:
            declared = response.headers.get("content-length", "")
            if declared.isdigit() and int(declared) > bounds.REPLY_BYTES:
                return response, None
            data = bytearray()
            for chunk in response.iter_raw():  # as each read comes, so the deadline is seen
                data += chunk
                if len(data) > bounds.REPLY_BYTES:
                    return response, None
                if time.monotonic() > deadline:
                    raise _Late
            return response, bytes(data)


class _Late(Exception):
    """The whole request took longer than its timeout."""


def _completion(data: bytes, attempt: int, retried: list[str]) -> Completion:
    doc = bounds.decode(data)
    try:
        choice = doc["choices"][0]
        message = choice["message"]
    except (KeyError, IndexError, TypeError):
        raise ValueError(f"no choices[0].message in {json.dumps(doc)[:200]}") from None
    if not isinstance(message, dict):
        raise ValueError("choices[0].message is not an object")
    calls = message.get("tool_calls") or []
    if not isinstance(calls, list) or not all(
        isinstance(c, dict) and isinstance(c.get("function"), dict)
        and isinstance(c["function"].get("name"), str)
        for c in calls
    ):
        raise ValueError("tool_calls is not a list of function calls")
    usage = doc.get("usage") if isinstance(doc.get("usage"), dict) else None
    return Completion(message, choice.get("finish_reason"), usage, attempt, retried)


def _server_message(response: Any, data: bytes) -> str:
    """The error text a server gave: OpenAI-style {"error": {"message": ...}}, else the body."""
    try:
        doc = bounds.decode(data)
    except ValueError:
        doc = None
    if isinstance(doc, dict):
        error = doc.get("error")
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return error["message"][:_MESSAGE_MAX]
        if isinstance(error, str):
            return error[:_MESSAGE_MAX]
    text = data[:_MESSAGE_MAX * 4].decode("utf-8", "replace").strip()
    return text[:_MESSAGE_MAX] or response.reason_phrase


def _retry_after(response: Any) -> float | None:
    value = response.headers.get("retry-after")
    try:
        return min(_RETRY_AFTER_MAX, max(0.0, float(value))) if value is not None else None
    except ValueError:
        return None
