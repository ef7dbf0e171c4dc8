-- The schema owns exactly these objects: an accidental addition or drop fails here.
BEGIN;
SELECT plan(15);

SELECT tables_are('tickq', ARRAY[
    'settings', 'slot', 'job_kind', 'job_run', 'drift', 'alert', 'migration', 'api_checksum', 'dispatcher',
    'job_step', 'pool', 'pool_slot',
    'agent', 'agent_settings', 'agent_turn',
    'dispatcher_tick', 'queue_registry', 'run_total', 'dispatcher_poll', 'run_count'
]);
SELECT views_are('tickq', ARRAY['queue_status', 'stale_due', 'capacity', 'pool_occupancy']);
SELECT domains_are('tickq', ARRAY[
    'kind_attempts', 'failure_streak', 'run_attempt', 'run_slots', 'output_tail', 'slot_number',
    'agent_turn_entry'
]);
SELECT functions_are('tickq', ARRAY[
    'each_once', 'is_timezone', 'legacy_zone_problem', 'unknown_zone', 'check_lease_covers_timeouts', 'check_kind',
    'check_kind_offset',
    'refuse_deleting_running_runs',
    'unknown_kind_error',
    'schedule_of', 'with_schedule', 'next_slot', 'next_slots', 'slots_between', 'last_slot', 'describe_schedule',
    'describe_calendar',
    'format_duration',
    'registry_error', 'registry_number', 'registry_shape', 'registry_seconds', 'registry_count',
    'registry_settings', 'registry_entry',
    'parse_kind', 'kind_problems', 'parse_settings', 'sync_registry', 'registry_problems', 'registry_top_problem',
    'registry_fraction',
    'registry_limits', 'within_limit', 'kind_name_ok', 'env_digests', 'report_late_run', 'live_leases',
    'finish_run', 'check_reported_outcome', 'expire_leases', 'slots_left', 'hold_from', 'claim_fit',
    'parse_pools', 'pool_slots_left',
    'sync_pools', 'weight_problems', 'parse_weight', 'claim_jobs', 'live_run', 'kind_claimable', 'kind_due',
    'kind_held',
    'claim_candidates', 'claim_plain', 'claim_open_runs',
    'kinds_to_catch_up', 'catch_up_kinds', 'month_end_windows', 'month_end_at', 'spread_times',
    'agent_entry',
    'start_run', 'report_run', 'release_dead_lease', 'next_due_at', 'request_cancel', 'cancels_requested',
    'asked_by',
    'pause_kind', 'resume_kind', 'record_tick', 'health_problems',
    'queue_status_at', 'stale_due_at',
    'sync_queue_registry', 'retired_kinds_at', 'forget_kind', 'same_project', 'project_problem',
    'queue_registry_at', 'queue_registry_problem', 'registry_source', 'recent_durations',
    'expected_duration', 'capacity_at', 'capacity_shares', 'capacity_lanes', 'capacity_verdict_of',
    'capacity_total_at', 'housekeeping', 'take_alerts', 'simulate',
    'simulate_events', 'simulate_window', 'simulated_hold', 'simulation_report', 'simulation_start',
    'simulation_repeats_until', 'simulation_walk_until', 'simulation_breaks', 'simulation_day_walls',
    'simulation_breaks_until', 'simulation_day_rules',
    'zone_steady', 'simulation_state', 'simulation_running', 'simulation_remap', 'simulation_copy_runs',
    'simulation_restore', 'simulation_dues', 'simulation_copy', 'simulation_copy_until', 'simulation_session',
    'simulation_arm',
    'simulation_next_due', 'simulation_holds', 'simulation_events', 'simulation_mark', 'simulation_stale',
    'simulation_window_breaks', 'simulation_best_copy', 'simulation_window_start', 'cron_parse',
    'simulation_unlabelled', 'simulation_relabel_state', 'simulation_relabel_ready',
    'simulation_relabel', 'simulation_relabel_chunk', 'simulation_relabel_start',
    'simulation_windows',
    'access_privileges', 'grant_access',
    'check_kind_armed', 'claim_manual', 'parse_chain', 'command_changed', 'arm_kind', 'report_step',
    'chain_start', 'chain_summary',
    'check_agent', 'agent_changed', 'agent_error', 'apply_agent_kind', 'retire_agent_kind', 'agent_json_text',
    'agent_json_seconds', 'save_agent', 'pause_agent', 'resume_agent', 'remove_agent', 'sync_agents',
    'agent_for_kind', 'load_agent', 'record_agent_turn', 'agents_at', 'agent_next_runs', 'agent_runs',
    'agent_transcript', 'agents_export', 'agent_detail', 'agent_run_transcript',
    'window_runs', 'report_window_start_at', 'report_header_at', 'report_dispatchers_at', 'report_timeline_at',
    'report_waiting_at',
    'report_slots_at', 'upcoming_at', 'report_kinds_at', 'kind_history', 'run_detail', 'registry_mirror',
    'registry_where', 'registry_problem', 'registry_limit', 'parse_schedule', 'schedule_entry', 'write_kind',
    'sync_kind',
    'sync_kinds', 'settings_drift', 'save_settings', 'sync_dispatcher', 'sync_slots',
    'registry_digest', 'keep_registry_digest', 'forget_registry_digest', 'parse_agents',
    'entry_problems', 'agent_schedule', 'agent_with_fields',
    'capacity_verdict_at', 'simulation_parts', 'simulation_first_window', 'simulation_replay_window',
    'simulation_merge', 'simulation_worst', 'simulation_window_repeats', 'simulation_merge_repeat',
    'simulation_fold', 'simulation_calm_allowed', 'simulation_calm_state', 'simulation_calm_runs',
    'simulation_calm_write', 'simulation_calm_walk', 'simulation_calm_wait', 'simulation_calm_order', 'simulation_calm',
    'simulation_clock',
    'calendar_next_steady', 'calendar_next_walk',
    'calendar_slots_in', 'held_ticks', 'ticks_held', 'period_ticks', 'period_load', 'spread_offsets',
    'cron_field', 'cron_calendar', 'cron_problem', 'calendar_of', 'calendar_day', 'calendar_day_slots',
    'calendar_next', 'calendar_count', 'calendar_steady_offset', 'calendar_last', 'calendar_day_first', 'weekday_name',
    'number_ranges',
    'describe_days',
    'parse_days', 'registry_no_repeats',
    'parse_zone', 'schedule_slots', 'schedule_warnings', 'slot_seconds', 'tick_lateness', 'tick_on_time',
    'on_time_tick',
    'metrics_buckets', 'metrics_label', 'metrics_text', 'metrics_families', 'metrics_runs_total',
    'metrics_kinds_at', 'metrics_merged_slots', 'metrics_run_duration', 'metrics_last_success', 'metrics_kind_gauge',
    'metrics_queue', 'count_run', 'explain_queue', 'explain_kind',
    'slot_holders_at', 'slot_occupancy_at', 'pool_occupancy_at', 'report_occupancy_at', 'report_pools_at'
]);
SELECT enum_has_labels('tickq', 'priority', ARRAY['urgent', 'high', 'normal', 'low']);
SELECT enum_has_labels('tickq', 'outcome',
    ARRAY['running', 'ok', 'failed', 'timeout', 'interrupted', 'lost', 'cancelled', 'skipped']);
SELECT enum_has_labels('tickq', 'run_trigger', ARRAY['schedule', 'retry', 'manual']);

SELECT is_empty(
    $$SELECT p.oid::regprocedure::text FROM pg_proc AS p
      WHERE p.pronamespace = 'tickq'::regnamespace AND obj_description(p.oid, 'pg_proc') IS NULL$$,
    'every function has a COMMENT'
);
SELECT is_empty(
    $$SELECT c.relname FROM pg_class AS c
      WHERE c.relnamespace = 'tickq'::regnamespace AND c.relkind IN ('v', 'r')
        AND obj_description(c.oid, 'pg_class') IS NULL$$,
    'every view and table has a COMMENT'
);
SELECT is_empty(
    $$SELECT t.typname FROM pg_type AS t
      WHERE t.typnamespace = 'tickq'::regnamespace AND t.typtype = 'd'
        AND obj_description(t.oid, 'pg_type') IS NULL$$,
    'every domain has a COMMENT'
);
-- The clock: a function reads it when its body calls now() (or another clock function) or uses
-- p_now, or when it calls a function of the schema that reads it. Such a function takes the
-- time as an optional last parameter p_now defaulting to now(), so that a test can set it; any
-- other function takes no p_now.
CREATE TEMP VIEW clock_use AS
WITH RECURSIVE f AS (
    SELECT p.oid, p.proname, p.prosrc,
        pg_get_function_arguments(p.oid) ~ '(^|, )(IN )?p_now timestamp with time zone DEFAULT now\(\)$' AS takes_now
    FROM pg_proc AS p
    WHERE p.pronamespace = 'tickq'::regnamespace AND p.prorettype <> 'trigger'::regtype
),
reads (oid) AS (
    SELECT f.oid FROM f
    WHERE f.prosrc ~* ('\m(now|clock_timestamp|statement_timestamp|transaction_timestamp|timeofday)\s*\('
        || '|\mcurrent_(timestamp|date|time)\M|\mp_now\M')
    UNION
    SELECT f.oid FROM reads AS r INNER JOIN f AS g ON r.oid = g.oid
    CROSS JOIN f WHERE f.prosrc ~ ('\mtickq\.' || g.proname || '\s*\(')
)
SELECT f.oid::regprocedure::text AS routine, f.takes_now, f.oid IN (SELECT r.oid FROM reads AS r) AS reads
FROM f;
SELECT is_empty(
    $$SELECT routine FROM clock_use WHERE reads AND NOT takes_now$$,
    'every function that reads the clock takes the time as an optional last parameter p_now defaulting to now()'
);
-- The functions still to lose their dead p_now: is_timezone and within_limit (constraints use them),
-- kind_name_ok (its signature kept from the old migrations), grant_access, and one
-- simulation_repeats_until of two.
SELECT is_empty(
    $$SELECT routine FROM clock_use WHERE takes_now AND NOT reads
        AND routine !~ '^tickq\.(is_timezone|within_limit|kind_name_ok|grant_access|simulation_repeats_until)\('$$,
    'no function takes a p_now it does not read'
);
SELECT has_column('tickq', 'job_kind', 'leased_until', 'job_kind.leased_until is a stable name');
SELECT columns_are('tickq', 'job_run', ARRAY[
    'id', 'kind', 'attempt', 'run_trigger', 'slots', 'dispatcher', 'claimed_at', 'started_at',
    'finished_at', 'outcome', 'exit_code', 'output_tail', 'duration', 'due_at', 'slot_row',
    'late_report_at', 'run_by', 'cancel_requested_at', 'cancel_by', 'cancel_role', 'cancel_reason',
    'slot_at', 'first_slot_at', 'slots_covered', 'weight', 'pools'
]);
SELECT is_empty(
    $$SELECT p.oid::regprocedure::text FROM pg_proc AS p
      WHERE p.pronamespace = 'tickq'::regnamespace
        AND EXISTS (SELECT FROM aclexplode(coalesce(p.proacl, acldefault('f', p.proowner))) AS a
                    WHERE a.grantee = 0 AND a.privilege_type = 'EXECUTE')$$,
    'no function is executable by public: roles get theirs from tickq.grant_access'
);

SELECT * FROM finish();
ROLLBACK;
