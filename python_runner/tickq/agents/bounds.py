"""What an agent run takes from a model server, bounded: a reply's size and nesting are checked
before it is decoded (a decoder recursing 50,000 deep is a crash, not an error), and a turn's
transcript entry is cut to the database's bound, saying in the entry what was cut."""

from __future__ import annotations

import json
import math
import re
from typing import Any

REPLY_BYTES = 16 << 20  # of a reply's body; past it the reply is refused unread
DEPTH_MAX = 64  # arrays and objects inside each other, in a reply or a tool's arguments

# A JSON string (its brackets are text); the unrolled form is linear with no backtracking.
_STRINGS = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")


def check_nesting(data: bytes | str, limit: int = DEPTH_MAX) -> None:
    """Raise ValueError (one line) if `data`'s arrays and objects nest deeper than `limit`, in
    time linear in its length. Each pass drops every innermost pair, so a text nested `limit`
    deep is empty after `limit` passes."""
    raw = data.encode("utf-8", "replace") if isinstance(data, str) else data
    brackets = _STRINGS.sub(b"", raw).translate(None, _NOT_BRACKETS)
    for _ in range(limit):
        if not brackets:
            return
        shorter = brackets.replace(b"[]", b"").replace(b"{}", b"")
        if shorter == brackets:
            raise ValueError("its brackets do not match")
        brackets = shorter
    if brackets:
        raise ValueError(f"nested deeper than {limit} levels")


def decode(data: bytes) -> Any:
    """A reply's JSON, its size and depth checked first; ValueError (one line) if it is not."""
    if len(data) > REPLY_BYTES:
        raise ValueError(f"a reply larger than {REPLY_BYTES >> 20} MiB")
    check_nesting(data)
    try:
        return json.loads(data)
    except (ValueError, RecursionError) as exc:  # RecursionError: a bound too generous
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ValueError(f"not JSON ({first}): {data[:200]!r}") from None


def bounded(entry: dict[str, Any], limit: int) -> dict[str, Any]:
    """`entry` with its long strings cut, then its long lists, until its JSON text fits in
    `limit` bytes; what was cut is said in its "cut" list. Numbers JSON cannot hold (1e400 is
    infinity) become null."""
    entry = _finite(entry)
    cut = list(entry.get("cut", []))
    current = entry
    for cap in (8192, 2048, 512, 128, 32):
        if _size(current) <= limit:
            break
        current = {**_cut(entry, cap, cap), "cut": [*cut, f"strings over {cap} characters"]}
    for items in (32, 8, 2):
        if _size(current) <= limit:
            break
        current = {**_cut(entry, 32, items),
                   "cut": [*cut, f"strings over 32 characters, lists over {items} items"]}
    if _size(current) > limit:
        keep = {k: v for k, v in entry.items() if k in ("turn", "error", "finish_reason")}
        current = _cut({**keep, "cut": [*cut, f"the entry: {_size(entry)} bytes"]}, 500, 8)
    return current


def _size(value: Any) -> int:
    return len(json.dumps(value).encode())


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, list):
        return [_finite(v) for v in value]
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    return value


def _cut(value: Any, cap: int, items: int) -> Any:
    if isinstance(value, str):
        return value if len(value) <= cap else value[:cap] + f"[... {len(value) - cap} cut]"
    if isinstance(value, list):
        kept = [_cut(v, cap, items) for v in value[:items]]
        return kept + ([f"[... {len(value) - items} items cut]"] if len(value) > items else [])
    if isinstance(value, dict):
        return {k: _cut(v, cap, items) if k != "cut" else v for k, v in value.items()}
    return value
