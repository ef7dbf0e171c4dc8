-- queue_status and stale_due, through their functions at a fixed time.
BEGIN;
SELECT plan(7);

SELECT * FROM tickq.sync_registry('{
    "settings": {"stale_after": 900},
    "kinds": {
        "busy": {"command": ["x"], "every": 300, "timeout": 60, "priority": "urgent"},
        "late": {"command": ["x"], "every": 300, "timeout": 60, "priority": "low"},
        "later": {"command": ["x"], "at": ["06:00"], "timeout": 60},
        "gone": {"command": ["x"], "every": 300, "timeout": 60}
    }}', '2026-06-01 10:00Z');
-- The built-in housekeeping kind is tested in its own file; here it waits out of the way.
UPDATE tickq.job_kind SET due_at = 'infinity' WHERE name = 'tickq.housekeeping';
-- one kind retired
SELECT * FROM tickq.sync_registry('{
    "settings": {"stale_after": 900},
    "kinds": {
        "busy": {"command": ["x"], "every": 300, "timeout": 60, "priority": "urgent"},
        "late": {"command": ["x"], "every": 300, "timeout": 60, "priority": "low"},
        "later": {"command": ["x"], "at": ["06:00"], "timeout": 60}
    }}', '2026-06-01 10:00Z');
SELECT results_eq($$SELECT kind FROM tickq.claim_jobs(1, 'd1', '2026-06-01 10:01Z')$$, $$VALUES ('busy')$$,
    'busy claimed');
SELECT * FROM tickq.report_run((SELECT run_id FROM tickq.job_kind WHERE name = 'busy'), 'd1', 'failed', 3, 'x', NULL,
    '2026-06-01 10:02Z');
SELECT results_eq($$SELECT kind FROM tickq.claim_jobs(1, 'd1', '2026-06-01 10:05Z')$$, $$VALUES ('busy')$$,
    'busy claimed again');

SELECT results_eq(
    $$SELECT kind, state, due, running, last_outcome::text,
        failure_streak FROM tickq.queue_status_at('2026-06-01 10:20Z')
      WHERE kind <> 'tickq.housekeeping'$$,
    $$VALUES ('busy', 'running', false, true, 'failed', 1),
             ('later', 'waiting', false, false, NULL, 0),
             ('late', 'stale', true, false, NULL, 0),
             ('gone', 'retired', false, false, NULL, 0)$$,
    'one row per kind in priority order: state, due, running, last outcome, streak');
SELECT is((SELECT next_due_at FROM tickq.queue_status_at('2026-06-01 10:20Z') WHERE kind = 'later'),
    '2026-06-02 06:00Z'::timestamptz, 'next due for a waiting kind');
SELECT results_eq($$SELECT kind, waiting FROM tickq.stale_due_at('2026-06-01 10:20Z')$$,
    $$VALUES ('late', '20 minutes'::interval)$$, 'stale_due lists the kind left due longer than 15 minutes');
SELECT is_empty($$SELECT * FROM tickq.stale_due_at('2026-06-01 10:14Z')$$, 'nothing is stale before the threshold');
SELECT ok((SELECT count(*) >= 0 FROM tickq.queue_status) AND (SELECT count(*) >= 0 FROM tickq.stale_due),
    'the views answer at now()');

SELECT * FROM finish();
ROLLBACK;
