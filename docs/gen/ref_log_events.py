"""reference/log-events.md: every event the runner logs, found in its source by the scan
tests_py/test_log_events.py owns (every `log.event/warning/error("name", field=...)` call)."""

from __future__ import annotations

import sys
from collections import defaultdict

from common import REPO, code, header, table


def events() -> dict[str, tuple[set[str], set[str], set[str]]]:
    """{event: (levels, fields, modules)}."""
    sys.path.insert(0, str(REPO / "tests_py"))
    from test_log_events import EVENTS  # the scan, made once when the module loads

    found: dict[str, tuple[set[str], set[str], set[str]]] = defaultdict(
        lambda: (set(), set(), set()))
    for name, level, fields, where in EVENTS:
        levels, names, modules = found[name]
        levels.add(level)
        names |= fields
        modules.add(where.rsplit(":", 1)[0])
    return dict(found)


LEVELS = ("info", "warning", "error")


def page() -> str:
    found = events()
    groups: dict[str, list[str]] = defaultdict(list)
    for name in sorted(found):
        groups[name.split(".", 1)[0]].append(name)
    parts = [header("Log events", "every log call in python_runner/tickq, as "
                    "tests_py/test_log_events.py finds them"), INTRO]
    for group, names in sorted(groups.items()):
        parts.append(f"## `{group}.*`\n")
        rows = []
        for name in names:
            levels, fields, modules = found[name]
            rows.append((code(name), ", ".join(lv for lv in LEVELS if lv in levels),
                         ", ".join(map(code, sorted(fields))), ", ".join(sorted(modules))))
        parts.append(table(("event", "level", "fields", "logged in"), rows))
    return "\n".join(parts)


INTRO = """
Every line tickq logs carries a stable event name, so logs can be grepped and parsed without
reading the prose around them. Text lines (the default) are
`TIME LEVEL EVENT key=value ...`; with `--log-format json` (or `TICKQ_LOG_FORMAT=json`) each
line is one JSON object with `ts`, `level`, `event` and the fields (a field named like one of
those three gets the prefix `field_`):

    2026-12-07T05:01:20.710Z INFO run.finished kind=hello run_id=2 outcome=ok exit_code=0 ...
    {"ts": "2026-12-07T05:01:20.710Z", "level": "info", "event": "run.finished", ...}

A value with a space, a quote or `=` is written as a JSON string. No line holds a secret: a URL
shows only its scheme and host, an `env` value never appears.
"""
