"""How commands print: tables two spaces apart, key/value pairs, JSON of database values."""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence
from datetime import UTC
from typing import Any, TextIO

# What a terminal would act on rather than show: C0 controls but newline and tab, DEL, C1
# controls (0x9b is a CSI of its own on some terminals) and the bidi overrides and isolates.
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def table(
    header: Sequence[str], rows: Sequence[Sequence[Any]], *, width: int | None = None,
    shrink: Sequence[int] = (),
) -> str:
    """Columns two spaces apart; with `width`, the `shrink` columns (widest first) are cut
    with "…" until every line fits, so rows never wrap."""
    cells = [[str(x) for x in r] for r in rows]
    widths = [max(len(x) for x in col) for col in zip(header, *cells, strict=False)]
    if width is not None:
        floor = {i: max(len(header[i]), 8) for i in shrink}
        while sum(widths) + 2 * (len(widths) - 1) > width:
            candidates = [i for i in shrink if widths[i] > floor[i]]
            if not candidates:
                break
            widest = max(candidates, key=lambda i: widths[i])
            widths[widest] -= 1
    lines = [list(header), ["-" * w for w in widths], *cells]
    return "\n".join(
        "  ".join(_fit(x, w).ljust(w) for x, w in zip(line, widths, strict=True)).rstrip()
        for line in lines
    )


def _fit(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def pairs(items: Sequence[tuple[str, str]]) -> str:
    """`key  value` lines, the values aligned."""
    width = max(len(k) for k, _ in items)
    return "\n".join(f"{k.ljust(width)}  {v}" for k, v in items)


def json_value(value: Any) -> Any:
    """What json.dumps cannot write itself: times as ISO 8601, durations as seconds."""
    if hasattr(value, "isoformat"):
        return value.isoformat()
    if hasattr(value, "total_seconds"):
        return value.total_seconds()
    return str(value)


def when(value: Any, *, utc: bool = False) -> str:
    """A timestamp to the second ("-" for none), in UTC with `utc`, else as it came."""
    if value is None:
        return "-"
    return (value.astimezone(UTC) if utc else value).strftime("%Y-%m-%d %H:%M:%S")


def shown(text: str, stream: TextIO | None = None) -> str:
    """`text` as it may be written to `stream` (stdout): on a terminal, the control characters
    of job and model output escaped (`\\x1b`), so an escape sequence cannot write the
    clipboard, retitle or clear the operator's terminal; to a pipe or file, as it is."""
    stream = stream or sys.stdout
    try:
        terminal = stream.isatty()
    except (AttributeError, ValueError):
        terminal = False
    if not terminal:
        return text
    return _CONTROLS.sub(_escaped, text)


def _escaped(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
