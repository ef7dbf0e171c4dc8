"""reference/metrics.md: every metric, from `tickq metrics` on a queue that has run (ref_queue):
its name, type and help line as the SQL writes them (`tickq.metrics_text`), and the labels its
samples carry."""

from __future__ import annotations

import re
from typing import Any

from common import code, header, table

SAMPLE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? ")
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="')
SUFFIXES = ("_bucket", "_sum", "_count")


def families(text: str) -> list[tuple[str, str, str, list[str]]]:
    """(name, type, help, labels) of each metric family, in the order printed."""
    found: dict[str, dict] = {}
    for line in text.splitlines():
        if line.startswith("# HELP "):
            name, _, help_text = line[7:].partition(" ")
            found.setdefault(name, {"labels": set()})["help"] = help_text
        elif line.startswith("# TYPE "):
            name, _, kind = line[7:].partition(" ")
            found.setdefault(name, {"labels": set()})["type"] = kind
        elif line and not line.startswith("#"):
            match = SAMPLE.match(line)
            if match:
                name = match.group(1)
                if name not in found:
                    name = next(name.removesuffix(s) for s in SUFFIXES if name.endswith(s))
                found[name]["labels"] |= set(LABEL.findall(match.group(2) or "")) - {"le"}
    return [(name, f["type"], f["help"], sorted(f["labels"])) for name, f in found.items()]


def page(metrics: str, conn: Any) -> str:
    from tickq.registry.durations import format_duration

    rows = [(code(name), kind, ", ".join(map(code, labels)), help_text)
            for name, kind, help_text, labels in families(metrics)]
    [buckets] = conn.execute("SELECT tickq.metrics_buckets()").fetchone()
    [outcomes] = conn.execute("SELECT enum_range(NULL::tickq.outcome)::text[]").fetchone()
    after = AFTER.format(
        buckets=", ".join(format_duration(int(b)) for b in buckets),
        outcomes=", ".join(code(o) for o in outcomes if o != "running"))
    return "\n".join([header("Metrics", "`tickq metrics` on a queue that has run; the SQL "
                             "function tickq.metrics_text writes every line"), INTRO,
                      table(("metric", "type", "labels", "what"), rows), after])


INTRO = """
`tickq metrics`, `tickq serve`'s `/metrics` and the registry's `metrics_file` print the same
lines, in Prometheus's text exposition format, all written by one SQL function,
`tickq.metrics_text` ([Prometheus and its alert rules](../how-to/prometheus.md)).
"""

AFTER = """
- The histogram `tickq_run_duration_seconds` has the buckets (`le`) {buckets}
  (`tickq.metrics_buckets()`).
- The counters never fall, and a scrape reads no history: each run that ends is counted in
  `tickq.run_count` (per kind and outcome, with its histogram buckets) in the same transaction
  as the report, the lease expiry or the late report that ends it; housekeeping's pruning
  changes no count.
- `tickq_runs_total` has a sample for each outcome a run can end with: {outcomes}.
"""
