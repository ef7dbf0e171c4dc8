-- report_late_run: a spooled result reported after an outage, before and after its lease expired.
BEGIN;
SELECT plan(11);

SELECT * FROM tickq.sync_registry('{
    "settings": {"lease_margin": 60},
    "kinds": {
        "pay": {"command": ["x"], "every": 3600, "timeout": 60, "retries": 2},
        "other": {"command": ["x"], "every": 3600, "timeout": 60, "retries": 2}
    }}', '2026-06-01 10:00Z');
UPDATE tickq.job_kind SET due_at = 'infinity' WHERE name IN ('tickq.housekeeping', 'other');

-- a success reported late, after the lease turned the run into lost: the failure is undone
SELECT results_eq($$SELECT kind FROM tickq.claim_jobs(1, 'd1', '2026-06-01 10:00Z')$$, $$VALUES ('pay')$$,
    'claimed');
-- started
SELECT tickq.start_run((SELECT max(id) FROM tickq.job_run), 'd1', '2026-06-01 10:00:01Z');
SELECT results_eq($$SELECT kind FROM tickq.expire_leases('2026-06-01 10:05Z')$$, $$VALUES ('pay')$$,
    'the lease expires while the database cannot hear the dispatcher');
SELECT results_eq($$SELECT failure_streak::integer, next_trigger::text, due_at FROM tickq.job_kind WHERE name = 'pay'$$,
    $$VALUES (1, 'retry', '2026-06-01 10:05:30Z'::timestamptz)$$, 'lost: a failure, a retry is scheduled');
SELECT results_eq(
    $$SELECT outcome::text, verdict FROM tickq.report_late_run((SELECT max(id) FROM tickq.job_run), 'd1', 'ok', 0,
        'paid', '40 seconds', '2026-06-01 10:06Z')$$,
    $$VALUES ('ok', 'late, failure undone')$$, 'the late success is recorded');
SELECT results_eq($$SELECT outcome::text, exit_code, output_tail::text, duration, late_report_at
    FROM tickq.job_run WHERE kind = 'pay'$$,
    $$VALUES ('ok', 0, 'paid', '40 seconds'::interval, '2026-06-01 10:06Z'::timestamptz)$$,
    'the run carries its real outcome, marked late');
SELECT results_eq($$SELECT failure_streak::integer, attempts::integer, next_trigger::text, due_at FROM tickq.job_kind
    WHERE name = 'pay'$$,
    $$VALUES (0, 0, 'schedule', '2026-06-01 11:00Z'::timestamptz)$$,
    'no retry: streak 0, due at the slot after the real finish');
SELECT results_eq(
    $$SELECT verdict FROM tickq.report_late_run((SELECT max(id) FROM tickq.job_run), 'd1', 'ok', 0, 'paid',
        NULL, '2026-06-01 10:07Z')$$,
    $$VALUES ('ignored')$$, 'a second replay of the same result changes nothing');
SELECT results_eq(
    $$SELECT verdict FROM tickq.report_late_run(987654, 'd1', 'ok', 0, 'paid', NULL, '2026-06-01 10:07Z')$$,
    $$VALUES ('unknown')$$, 'a result for a run the database never had is unknown (kept aside, not dropped)');

-- a late report after the kind ran again: recorded, nothing undone
SELECT results_eq($$SELECT kind FROM tickq.claim_jobs(1, 'd1', '2026-06-01 11:00Z')$$, $$VALUES ('pay')$$,
    'claimed again');
-- lost again
SELECT tickq.expire_leases('2026-06-01 11:05Z');
-- the retry runs
SELECT kind FROM tickq.claim_jobs(1, 'd2', '2026-06-01 11:05:30Z');
SELECT results_eq(
    $$SELECT verdict FROM tickq.report_late_run((SELECT min(id) FROM tickq.job_run WHERE attempt = 1
        AND claimed_at = '2026-06-01 11:00Z'), 'd1', 'ok', 0, 'paid', NULL, '2026-06-01 11:06Z')$$,
    $$VALUES ('late')$$, 'something ran since: recorded late only');

-- a report still in time (the lease held through the outage) is an ordinary report
SELECT results_eq(
    $$SELECT verdict FROM tickq.report_late_run((SELECT run_id FROM tickq.job_kind WHERE name = 'pay'), 'd2', 'ok',
        0, 'done', NULL, '2026-06-01 11:07Z')$$,
    $$VALUES ('reported')$$, 'a live run is finished as report_run would');

SELECT * FROM finish();
ROLLBACK;
