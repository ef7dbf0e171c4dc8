"""The baseline migration and the chain of migrations it replaced.

``sql/migrations/0100_baseline.sql`` is the schema's tables as they stood after the chain
0001_queue.sql .. 0090_no_dead_clock_parameters.sql, in one file. A database that recorded the
chain up to 0040_simulation_repeats_until.sql is recorded as at the baseline instead of running
it, after the chain's later files it lacks (sql/chain/ keeps them as they were: a queue of main
may lack some that merged after it was made). The API files, applied next, replace every
function and drop those no file defines (sql/api/99_privileges.sql), so such a database ends
with the schema of a fresh one (tests_py/test_schema_upgrade*.py). A database that stops
earlier in the chain is refused, naming the file it lacks: a tickq from before the baseline
brings it to the end of the chain first.
"""

from __future__ import annotations

from typing import NamedTuple

from tickq.db.errors import MigrationError

BASELINE = "0100_baseline.sql"
BASELINE_VERSION = 100
# Every migration of the chain up to this one must be recorded for a database to be adopted; the
# later ones are in sql/chain/, run where a database lacks them.
FLOOR = 40
# The last commit whose sql/migrations hold the chain: a tickq of it migrates a database that
# stops earlier to the chain's end.
LAST_OF_CHAIN_COMMIT = "412a04b"

_CHAIN = """
0001_queue.sql 0002_capacity_alerts_housekeeping.sql 0003_fast_paths.sql 0004_slot_rows.sql
0005_one_lease_per_run.sql 0006_drop_unused_run_index.sql 0007_lean_hot_path.sql
0008_hot_leases.sql 0009_lease_without_foreign_key.sql 0010_column_domains.sql
0011_every_offset.sql 0012_registry_bounds.sql 0013_secrets_and_late_reports.sql
0014_irreversible_and_chains.sql 0015_agents.sql 0017_operator.sql
0018_one_table_of_bounds.sql 0019_api_signatures.sql 0020_upcoming.sql
0021_queue_registry.sql 0022_page_at_a_glance.sql 0023_streak_outcome_and_mirror_digest.sql
0024_quiet_sync.sql 0026_calendar_fields.sql 0027_run_totals_and_pings.sql
0029_calendar_columns_forget_the_digest.sql 0030_dispatcher_agents.sql 0031_cancel.sql
0032_run_slots.sql 0033_weights_and_pools.sql 0034_catch_up.sql
0036_weights_and_pools_seen.sql 0037_claim_fit_one_record.sql
0038_kind_valid_one_test_at_a_time.sql 0039_simulation_repeat_rest_points.sql
0040_simulation_repeats_until.sql 0060_project_identity.sql 0065_cancel_who_asked.sql
0070_simulation_from_states.sql 0071_simulate_window_stops_stale.sql 0072_run_counts.sql
0073_metrics_kind.sql 0085_drop_claim_kind.sql 0090_no_dead_clock_parameters.sql
"""
REPLACED: dict[int, str] = {int(name[:4]): name for name in _CHAIN.split()}


class Adoption(NamedTuple):
    """What to do with a database's record of the replaced chain."""

    replaced: list[int]  # the chain's versions it recorded, to be forgotten
    record_baseline: bool  # whether the baseline is to be recorded without running it
    catch_up: list[str]  # the files of sql/chain/ to run first


def known(shipped: set[int]) -> set[int]:
    """The versions a database may have recorded: those shipped, and the replaced chain's when
    the baseline is among them."""
    return shipped | set(REPLACED) if BASELINE_VERSION in shipped else shipped


def adoption(recorded: dict[int, str], shipped: set[int]) -> Adoption:
    """How a database that recorded ``recorded`` reaches the baseline, given the versions
    shipped; raises MigrationError for a database that stops short of FLOOR."""
    replaced = sorted(v for v in recorded if v in REPLACED)
    if BASELINE_VERSION not in shipped or not replaced:
        return Adoption([], False, [])
    renamed = [f"{recorded[v]} (expected {REPLACED[v]})" for v in replaced
               if recorded[v] != REPLACED[v]]
    if renamed:
        raise MigrationError(f"the database recorded migrations under other names: "
                             f"{', '.join(renamed)}")
    missing = [v for v in REPLACED if v <= FLOOR and v not in recorded]
    if missing:
        raise MigrationError(
            f"the database stops at {recorded[replaced[-1]]} and lacks {REPLACED[missing[0]]}, "
            f"part of the way along the migrations that {BASELINE} replaced: migrate it to "
            f"their end first with a tickq from before the baseline (git commit "
            f"{LAST_OF_CHAIN_COMMIT}), then with this one")
    return Adoption(replaced, BASELINE_VERSION not in recorded,
                    [name for v, name in REPLACED.items() if v > FLOOR and v not in recorded])
