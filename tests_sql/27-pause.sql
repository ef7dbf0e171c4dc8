-- Pause and resume: an operator's state beside the registry's enabled, honoured by claims.
BEGIN;
SELECT plan(14);

SELECT * FROM tickq.sync_registry('{
    "settings": {"slots": 3, "stale_after": 900},
    "kinds": {
        "a": {"command": ["x"], "every": 300, "timeout": 60, "priority": "urgent"},
        "b": {"command": ["x"], "every": 300, "timeout": 60}
    }}', '2026-06-01 10:00Z');
UPDATE tickq.job_kind SET due_at = 'infinity' WHERE name = 'tickq.housekeeping';

SELECT is(tickq.pause_kind('a', p_reason => 'upstream down', p_by => 'ann@laptop', p_now => '2026-06-01 10:01Z'),
    'infinity'::timestamptz, 'paused until resumed');
SELECT results_eq($$SELECT state, due, paused_until, paused_reason, paused_by
    FROM tickq.queue_status_at('2026-06-01 10:06Z') WHERE kind = 'a'$$,
    $$VALUES ('paused', false, 'infinity'::timestamptz, 'upstream down', 'ann@laptop')$$,
    'status shows the pause, its reason and who');
SELECT results_eq($$SELECT kind FROM tickq.claim_jobs(3, 'd', '2026-06-01 10:06Z')$$,
    $$VALUES ('b')$$, 'claims skip the paused kind, urgent or not');
SELECT is_empty($$SELECT * FROM tickq.stale_due_at('2026-06-01 11:00Z') WHERE kind = 'a'$$,
    'a paused kind is never stale');
-- a registry edit of the paused kind
SELECT * FROM tickq.sync_registry('{
    "settings": {"slots": 3, "stale_after": 900},
    "kinds": {
        "a": {"command": ["y"], "every": 600, "timeout": 60, "priority": "urgent"},
        "b": {"command": ["x"], "every": 300, "timeout": 60}
    }}', '2026-06-01 10:07Z');
SELECT is((SELECT paused_until FROM tickq.job_kind WHERE name = 'a'), 'infinity'::timestamptz,
    'sync leaves the pause alone');
SELECT results_eq($$SELECT kind, run_trigger::text FROM tickq.claim_manual('a', 'me', NULL, '2026-06-01 10:08Z')$$,
    $$VALUES ('a', 'manual')$$, 'a paused kind may be run by hand');
-- the manual run reported
SELECT * FROM tickq.report_run((SELECT run_id FROM tickq.job_kind WHERE name = 'a'), 'me', 'ok',
    0, NULL, NULL, '2026-06-01 10:09Z');

SELECT is(tickq.resume_kind('a', '2026-06-01 10:30Z'), 'infinity'::timestamptz,
    'resume returns the pause it ended');
SELECT is(tickq.resume_kind('a', '2026-06-01 10:30Z'), NULL, 'resuming a kind not paused changes nothing');
SELECT is_empty($$SELECT * FROM tickq.stale_due_at('2026-06-01 10:31Z') WHERE kind = 'a'$$,
    'just resumed: waiting since the resume, not since its due time');
SELECT results_eq($$SELECT kind FROM tickq.claim_jobs(3, 'd', '2026-06-01 10:31Z') WHERE kind = 'a'$$,
    $$VALUES ('a')$$, 'claimed again once resumed');

-- A pause with an end ends by itself.
UPDATE tickq.job_kind SET run_id = NULL, leased_by = NULL, leased_until = NULL, due_at = '2026-06-01 11:00Z'
WHERE name = 'b';
SELECT is(tickq.pause_kind('b', '2026-06-01 11:30Z', p_now => '2026-06-01 10:40Z'),
    '2026-06-01 11:30Z'::timestamptz, 'paused for a while');
SELECT is_empty($$SELECT * FROM tickq.claim_jobs(3, 'd', '2026-06-01 11:29Z') WHERE kind = 'b'$$,
    'not claimed before the pause ends');
SELECT throws_ok($$SELECT tickq.pause_kind('b', '2026-06-01 10:00Z', p_now => '2026-06-01 10:40Z')$$,
    'TQ060', NULL, 'a pause ending in the past is refused');
SELECT throws_ok($$SELECT tickq.pause_kind('nope')$$, 'TQ003', 'no kind "nope" in the registry',
    'an unknown kind is refused');

SELECT * FROM finish();
ROLLBACK;
