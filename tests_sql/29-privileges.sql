-- Least privilege: the functions a dispatcher or reader calls run as their owner with a pinned
-- search_path; a dispatcher calls exactly those and touches no table; a reader reads the views.
BEGIN;
SELECT plan(16);

SELECT is(
    (SELECT array_agg(f.name ORDER BY convert_to(f.name, 'UTF8')) FROM (
        SELECT DISTINCT p.proname::text AS name FROM pg_proc AS p
        WHERE p.pronamespace = 'tickq'::regnamespace AND p.prosecdef) AS f),
    ARRAY[
        'agent_detail', 'agent_for_kind', 'agent_next_runs', 'agent_run_transcript',
        'agent_runs', 'agent_transcript', 'agents_at', 'agents_export', 'cancels_requested', 'capacity_at',
        'capacity_total_at', 'capacity_verdict_at', 'chain_start', 'check_lease_covers_timeouts', 'claim_jobs',
        'claim_manual', 'explain_kind', 'forget_kind', 'health_problems', 'housekeeping',
        'kind_history', 'live_leases', 'load_agent', 'metrics_text', 'next_due_at', 'on_time_tick', 'pause_agent',
        'pause_kind',
        'pool_occupancy_at',
        'queue_registry_at', 'queue_status_at', 'record_agent_turn', 'record_tick', 'registry_mirror',
        'registry_problems',
        'release_dead_lease', 'remove_agent', 'report_dispatchers_at', 'report_header_at',
        'report_kinds_at', 'report_late_run', 'report_pools_at', 'report_run', 'report_slots_at', 'report_step',
        'report_timeline_at', 'report_waiting_at', 'request_cancel', 'resume_agent', 'resume_kind', 'retired_kinds_at',
        'run_detail', 'save_agent', 'schedule_slots', 'schedule_warnings', 'slot_occupancy_at', 'stale_due_at',
        'start_run', 'sync_registry', 'take_alerts', 'tick_lateness', 'tick_on_time', 'upcoming_at'
    ],
    'exactly the functions dispatchers and readers call (and the deferred trigger) run as their owner'
);
SELECT is_empty(
    $$SELECT p.oid::regprocedure::text FROM pg_proc AS p
      WHERE p.pronamespace = 'tickq'::regnamespace AND p.prosecdef
        AND NOT 'search_path=pg_catalog, tickq, pg_temp' = ANY(coalesce(p.proconfig, '{}'))$$,
    'every SECURITY DEFINER function pins its search_path, pg_temp last'
);
SELECT ok(
    (SELECT 'plan_cache_mode=force_generic_plan' = any(p.proconfig) FROM pg_proc AS p
     WHERE p.oid = 'tickq.claim_jobs(integer, text, timestamptz)'::regprocedure),
    'claim_jobs keeps its plan_cache_mode beside the search_path'
);
SELECT is_empty(
    $$SELECT c.relname FROM pg_class AS c
      CROSS JOIN LATERAL aclexplode(c.relacl) AS a
      WHERE c.relnamespace = 'tickq'::regnamespace AND a.grantee = 0$$,
    'no table or view grants anything to public'
);

-- Two roles of this test, marked as sql/roles.sql marks them (rolled back with the rest).
CREATE ROLE tq29_dispatcher;
CREATE ROLE tq29_reader;
DO $$
BEGIN
    EXECUTE format('ALTER ROLE tq29_dispatcher IN DATABASE %I SET tickq.access = %L',
        current_database(), 'dispatcher');
    EXECUTE format('ALTER ROLE tq29_reader IN DATABASE %I SET tickq.access = %L', current_database(), 'reader');
END
$$;
SELECT results_eq(
    $$SELECT role_name, access FROM tickq.grant_access() WHERE role_name LIKE 'tq29%' ORDER BY 1$$,
    $$VALUES ('tq29_dispatcher', 'dispatcher'), ('tq29_reader', 'reader')$$,
    'grant_access finds the roles marked in this database'
);

SELECT is(
    (SELECT array_agg(p.proname::text ORDER BY convert_to(p.proname::text, 'UTF8')) FROM pg_proc AS p
     WHERE p.pronamespace = 'tickq'::regnamespace AND has_function_privilege('tq29_dispatcher', p.oid, 'EXECUTE')),
    ARRAY[
        'agent_detail', 'agent_for_kind', 'agent_next_runs', 'agent_run_transcript',
        'agent_runs', 'agent_transcript', 'agents_at', 'agents_export', 'cancels_requested', 'capacity_at',
        'capacity_total_at', 'capacity_verdict_at', 'chain_start', 'claim_jobs', 'claim_manual',
        'explain_kind', 'forget_kind', 'health_problems', 'housekeeping', 'kind_history', 'live_leases',
        'load_agent',
        'metrics_text', 'next_due_at', 'on_time_tick',
        'pause_agent', 'pause_kind', 'pool_occupancy_at', 'queue_registry_at', 'queue_status_at',
        'record_agent_turn', 'record_tick',
        'registry_mirror', 'registry_problems', 'release_dead_lease', 'remove_agent',
        'report_dispatchers_at', 'report_header_at', 'report_kinds_at', 'report_late_run',
        'report_pools_at', 'report_run', 'report_slots_at', 'report_step', 'report_timeline_at',
        'report_waiting_at', 'request_cancel', 'resume_agent',
        'resume_kind', 'retired_kinds_at', 'run_detail', 'save_agent',
        'schedule_slots', 'schedule_warnings', 'slot_occupancy_at',
        'stale_due_at', 'start_run', 'sync_registry', 'take_alerts', 'tick_lateness', 'tick_on_time',
        'upcoming_at'
    ],
    'the dispatcher may call the functions the runner calls, and no other'
);
SELECT is(
    (SELECT array_agg(c.relname::text ORDER BY convert_to(c.relname::text, 'UTF8')) FROM pg_class AS c
     WHERE c.relnamespace = 'tickq'::regnamespace AND c.relkind IN ('r', 'v', 'S')
       AND (has_table_privilege('tq29_dispatcher', c.oid, 'SELECT, INSERT, UPDATE, DELETE, TRUNCATE')
           OR (c.relkind = 'S' AND has_sequence_privilege('tq29_dispatcher', c.oid, 'USAGE, UPDATE')))),
    ARRAY['api_checksum', 'capacity', 'migration', 'pool_occupancy', 'queue_status', 'stale_due'],
    'the dispatcher reads the views and the migrator''s bookkeeping, and holds no right on the queue''s tables'
);
SELECT is(
    (SELECT array_agg(p.proname::text ORDER BY convert_to(p.proname::text, 'UTF8')) FROM pg_proc AS p
     WHERE p.pronamespace = 'tickq'::regnamespace AND has_function_privilege('tq29_reader', p.oid, 'EXECUTE')),
    ARRAY[
        'agents_at', 'agents_export', 'capacity_at', 'capacity_total_at', 'capacity_verdict_at', 'explain_kind',
        'health_problems', 'kind_history',
        'metrics_text', 'pool_occupancy_at', 'queue_registry_at', 'queue_status_at', 'report_dispatchers_at',
        'report_header_at',
        'report_kinds_at', 'report_pools_at', 'report_slots_at', 'report_timeline_at', 'report_waiting_at',
        'retired_kinds_at', 'run_detail', 'slot_occupancy_at', 'stale_due_at', 'upcoming_at'
    ],
    'the reader may call only the functions behind the views, the status page and what check reads'
);

SELECT lives_ok(
    $$SET LOCAL ROLE tq29_dispatcher;
      SELECT * FROM tickq.sync_registry('{"settings": {"slots": 2}, "kinds": {"k29": {"command": ["true"], "every": 60,
          "timeout": 30, "priority": "normal", "retries": 0, "enabled": true}}}'::jsonb, '2026-01-01 00:00Z');
      RESET ROLE$$,
    'a dispatcher syncs a registry (the deferred lease check runs as the owner too)'
);
SELECT lives_ok(
    $$SET LOCAL ROLE tq29_dispatcher;
      SELECT * FROM tickq.claim_jobs(2, 'host29:1', '2026-01-01 00:01Z');
      SELECT tickq.start_run((SELECT q.run_id FROM tickq.queue_status AS q WHERE q.kind = 'k29'), 'host29:1',
          '2026-01-01 00:01Z');
      RESET ROLE$$,
    'a dispatcher claims and starts a run'
);
SELECT lives_ok(
    $$SET LOCAL ROLE tq29_dispatcher;
      SELECT * FROM tickq.report_run(
          (SELECT r.run_id FROM tickq.queue_status AS r WHERE r.kind = 'k29'), 'host29:1', 'ok', 0, 'out',
          NULL, '2026-01-01 00:02Z');
      RESET ROLE$$,
    'a dispatcher reports its run, finding it through the view'
);
SELECT throws_ok(
    $$SET LOCAL ROLE tq29_dispatcher; UPDATE tickq.job_kind SET enabled = false$$,
    '42501', NULL, 'a dispatcher cannot update job_kind behind the registry'
);
SELECT throws_ok(
    $$SET LOCAL ROLE tq29_dispatcher; SELECT count(*) FROM tickq.job_run$$,
    '42501', NULL, 'a dispatcher cannot read job_run'
);
SELECT throws_ok(
    $$SET LOCAL ROLE tq29_reader; SELECT * FROM tickq.claim_jobs(1, 'reader')$$,
    '42501', NULL, 'a reader cannot claim'
);
SELECT lives_ok(
    $$SET LOCAL ROLE tq29_reader; SELECT count(*) FROM tickq.queue_status; SELECT count(*) FROM tickq.capacity;
      RESET ROLE$$,
    'a reader reads the views'
);

DO $$
BEGIN
    EXECUTE format('ALTER ROLE tq29_reader IN DATABASE %I SET tickq.access = %L', current_database(), 'admin');
END
$$;
SELECT throws_ok(
    'SELECT * FROM tickq.grant_access()', 'TQ070', NULL,
    'an access other than dispatcher or reader is refused'
);

SELECT * FROM finish();
ROLLBACK;
