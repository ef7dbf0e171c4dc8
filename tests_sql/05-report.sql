-- report_run: outcomes, retries with exponential backoff, rescheduling, refused reports.
BEGIN;
SELECT plan(28);

SELECT * FROM tickq.sync_registry('{
    "kinds": {
        "flaky": {"command": ["x"], "every": 900, "timeout": 60, "retries": 2},
        "daily": {"command": ["x"], "at": ["06:00"], "timeout": 60}
    }}', '2026-06-01 10:00Z');
-- The built-in housekeeping kind is tested in its own file; here it waits out of the way.
UPDATE tickq.job_kind SET due_at = 'infinity' WHERE name = 'tickq.housekeeping';

-- success: the next slot strictly after now, clock-aligned
SELECT results_eq($$SELECT kind FROM tickq.claim_jobs(1, 'd1', '2026-06-01 10:02Z')$$, $$VALUES ('flaky')$$, 'claimed');
-- the runner records the start
SELECT tickq.start_run((SELECT run_id FROM tickq.job_kind WHERE name = 'flaky'), 'd1',
    '2026-06-01 10:02:01Z');
SELECT results_eq(
    $$SELECT outcome::text, failure_streak, next_due_at, next_trigger::text
      FROM tickq.report_run((SELECT run_id FROM tickq.job_kind WHERE name = 'flaky'), 'd1', 'ok', 0, 'all good',
          NULL, '2026-06-01 10:03Z')$$,
    $$VALUES ('ok', 0, '2026-06-01 10:15Z'::timestamptz, 'schedule')$$,
    'success: due at the next quarter hour');
SELECT results_eq($$SELECT outcome::text, exit_code, output_tail::text, duration, started_at,
    finished_at FROM tickq.job_run WHERE kind = 'flaky'$$,
    $$VALUES ('ok', 0, 'all good', '59 seconds'::interval, '2026-06-01 10:02:01Z'::timestamptz,
        '2026-06-01 10:03Z'::timestamptz)$$,
    'the run records outcome, exit code, tail and duration from its start');
SELECT is((SELECT run_id FROM tickq.job_kind WHERE name = 'flaky'), NULL, 'the lease is released');

-- refused reports change nothing
SELECT throws_ok($$SELECT * FROM tickq.report_run((SELECT max(id) FROM tickq.job_run), 'd1', 'failed', 1, NULL, NULL,
    '2026-06-01 10:04Z')$$,
    'TQ001', NULL, 'a second report of the same run is refused');
SELECT is((SELECT outcome::text FROM tickq.job_run WHERE kind = 'flaky'), 'ok', 'and the first report stands');
SELECT throws_ok($$SELECT * FROM tickq.report_run(987654, 'd1', 'ok')$$, 'TQ007', 'run 987654 does not exist',
    'a report for no run is refused');

-- failure with retries: backoff 30s, 60s, then the next regular slot
SELECT results_eq($$SELECT kind, attempt FROM tickq.claim_jobs(1, 'd1', '2026-06-01 10:15Z')$$, $$VALUES ('flaky',
    1)$$, 'attempt 1');
SELECT throws_ok($$SELECT * FROM tickq.report_run((SELECT run_id FROM tickq.job_kind WHERE name = 'flaky'),
    'someone-else', 'ok')$$,
    'TQ001', NULL, 'a dispatcher cannot report a run leased by another');
SELECT results_eq(
    $$SELECT failure_streak, next_due_at, next_trigger::text FROM tickq.report_run(
        (SELECT run_id FROM tickq.job_kind WHERE name = 'flaky'), 'd1', 'failed', 1, 'boom', NULL,
            '2026-06-01 10:16Z')$$,
    $$VALUES (1, '2026-06-01 10:16:30Z'::timestamptz, 'retry')$$, 'first failure: retry after 30 s');
SELECT is_empty($$SELECT * FROM tickq.claim_jobs(1, 'd1', '2026-06-01 10:16:29Z')$$, 'not before the backoff');
SELECT results_eq($$SELECT kind, attempt, run_trigger::text FROM tickq.claim_jobs(1, 'd1', '2026-06-01 10:16:30Z')$$,
    $$VALUES ('flaky', 2, 'retry')$$, 'attempt 2 is a retry');
SELECT results_eq(
    $$SELECT failure_streak, next_due_at, next_trigger::text FROM tickq.report_run(
        (SELECT run_id FROM tickq.job_kind WHERE name = 'flaky'), 'd1', 'timeout', NULL, 'killed', NULL,
            '2026-06-01 10:17Z')$$,
    $$VALUES (2, '2026-06-01 10:18:00Z'::timestamptz, 'retry')$$, 'second failure (a timeout): retry after 60 s');
SELECT results_eq($$SELECT attempt FROM tickq.claim_jobs(1, 'd1', '2026-06-01 10:18Z')$$, $$VALUES (3)$$, 'attempt 3');
SELECT results_eq(
    $$SELECT failure_streak, next_due_at, next_trigger::text FROM tickq.report_run(
        (SELECT run_id FROM tickq.job_kind WHERE name = 'flaky'), 'd1', 'failed', 2, NULL, NULL, '2026-06-01 10:19Z')$$,
    $$VALUES (3, '2026-06-01 10:30Z'::timestamptz, 'schedule')$$, 'retries spent: the next regular slot, streak kept');
SELECT results_eq($$SELECT attempt, run_trigger::text FROM tickq.claim_jobs(1, 'd1', '2026-06-01 10:30Z')$$,
    $$VALUES (1, 'schedule')$$, 'the next slot starts again at attempt 1');

-- interruption (dispatcher shutdown) is not the command's fault
SELECT results_eq(
    $$SELECT failure_streak, next_due_at, next_trigger::text FROM tickq.report_run(
        (SELECT run_id FROM tickq.job_kind WHERE name = 'flaky'), 'd1', 'interrupted', -15, 'stopping', NULL,
            '2026-06-01 10:31Z')$$,
    $$VALUES (3, '2026-06-01 10:30Z'::timestamptz, 'schedule')$$, 'interrupted: due again at once, streak unchanged');
SELECT results_eq($$SELECT attempt FROM tickq.claim_jobs(1, 'd1', '2026-06-01 10:32Z')$$, $$VALUES (1)$$,
    'an interrupted attempt is not spent');
SELECT throws_ok($$SELECT * FROM tickq.report_run((SELECT run_id FROM tickq.job_kind WHERE name = 'flaky'), 'd1',
    'running')$$,
    '22023', NULL, 'running is not an outcome to report');

-- output is bounded to the last 64 KiB
SELECT lives_ok($$SELECT * FROM tickq.report_run((SELECT run_id FROM tickq.job_kind WHERE name = 'flaky'), 'd1',
    'ok', 0,
    repeat('a', 100000) || 'THE END', NULL, '2026-06-01 10:33Z')$$, 'a long output is accepted');
SELECT results_eq($$SELECT length(output_tail), right(output_tail,
    7) FROM tickq.job_run WHERE kind = 'flaky' ORDER BY id DESC LIMIT 1$$,
    $$VALUES (65536, 'THE END')$$, 'and only its last 64 KiB are kept');
SELECT is((SELECT failure_streak::integer FROM tickq.job_kind WHERE name = 'flaky'), 0, 'success resets the streak');

-- missed slots collapse: a daily kind that slept three days runs once, at the next slot after now
UPDATE tickq.job_kind SET due_at = '2026-06-01 06:00Z' WHERE name = 'daily';
SELECT results_eq($$SELECT kind FROM tickq.claim_jobs(1, 'd1', '2026-06-04 12:00Z')$$, $$VALUES ('daily')$$,
    'the sleeping daily kind is claimed once');
SELECT results_eq(
    $$SELECT r.slots::integer, k.next_due_at FROM tickq.job_run AS r,
        tickq.report_run(r.id, 'd1', 'ok', 0, NULL, NULL, '2026-06-04 12:01Z') AS k
      WHERE r.kind = 'daily' AND r.outcome = 'running'$$,
    $$VALUES (4, '2026-06-05 06:00Z'::timestamptz)$$,
    'four missed daily slots merge into one run, then the next slot after now');

-- a lease always names a run that exists: a running run cannot be deleted, finished ones can
SELECT results_eq($$SELECT kind FROM tickq.claim_manual('flaky', 'd1', NULL, '2026-06-04 12:02Z')$$,
    $$VALUES ('flaky')$$, 'a run is live');
SELECT throws_ok($$DELETE FROM tickq.job_run WHERE outcome = 'running'$$, '23503', NULL,
    'deleting a running run is refused');
SELECT lives_ok($$DELETE FROM tickq.job_run WHERE outcome <> 'running'$$, 'finished runs can be deleted');
SELECT is((SELECT r.kind FROM tickq.job_kind AS k INNER JOIN tickq.job_run AS r ON k.run_id = r.id), 'flaky',
    'the live run and its lease are intact');

SELECT * FROM finish();
ROLLBACK;
