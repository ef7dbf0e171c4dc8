"""The names and bounds the runner shares with the database, written once on the Python side.

The database owns each of them (an enum, a domain's check, a constraint, tickq.registry_limits);
tests_py/test_contract.py shows that every value here equals the database's, so Python code
imports these instead of spelling the names again. It imports nothing and asks the database
nothing at run time. The rooms that may not depend on tickq.db (registry, host) keep a copy of
the few they need; the same test holds those copies to these values.
"""

from __future__ import annotations

from typing import Final, Literal

# tickq.priority, in claim order: a free slot goes to the first lane with a due kind.
LANES: Final = ("urgent", "high", "normal", "low")
Lane = Literal["urgent", "high", "normal", "low"]
DEFAULT_LANE: Final = "normal"

# Weekday names of `on` (ISO order: mon is day 1, as the database stores on_days).
WEEKDAYS: Final = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")

# tickq.outcome. "running" is a run in progress, "lost" one whose lease ran out and "skipped" a
# slot later than its kind's catch_up (no command started); the runner reports only the others
# ("cancelled": stopped at an operator's request, `tickq cancel`).
OUTCOMES: Final = ("running", "ok", "failed", "timeout", "interrupted", "lost", "cancelled",
                   "skipped")
REPORTED_OUTCOMES: Final = ("ok", "failed", "timeout", "interrupted", "cancelled")
Outcome = Literal["ok", "failed", "timeout", "interrupted", "cancelled"]

# tickq.run_trigger: why a run was claimed.
TRIGGERS: Final = ("schedule", "retry", "manual")
Trigger = Literal["schedule", "retry", "manual"]

# tickq.alert_condition: what an alert is about.
ALERT_CONDITIONS: Final = ("failing", "stale")

# The domain tickq.output_tail: the database keeps at most this many characters of a run's
# output (the right-most ones), so the runner keeps no more than that either.
OUTPUT_TAIL_CHARS: Final = 65536

# The domain tickq.agent_turn_entry: one turn of an agent run's transcript is at most this many
# bytes of JSON text, so the agent runner bounds each entry under it (tickq.agents.turns).
AGENT_TURN_BYTES: Final = 32768
