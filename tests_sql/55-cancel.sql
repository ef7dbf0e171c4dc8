-- Cancel: a request recorded on the run (who, why, when), its refusals, the holder's poll, and
-- a run finished as cancelled: no failure in the streak, no retry, the next slot after now.
BEGIN;
SELECT plan(15);

SELECT * FROM tickq.sync_registry('{
    "settings": {"slots": 3},
    "kinds": {
        "a": {"command": ["x"], "every": 3600, "timeout": 600, "retries": 3},
        "b": {"command": ["x"], "every": 3600, "timeout": 600}
    }}', '2026-06-01 10:00Z');
UPDATE tickq.job_kind SET due_at = 'infinity' WHERE name = 'tickq.housekeeping';
UPDATE tickq.job_kind SET due_at = '2026-06-01 10:00Z', failure_streak = 2 WHERE name = 'a';
UPDATE tickq.job_kind SET due_at = 'infinity' WHERE name = 'b';
SELECT results_eq($$SELECT kind FROM tickq.claim_jobs(3, 'host:1', '2026-06-01 10:01Z')$$,
    $$VALUES ('a')$$, 'a is claimed by host:1');

SELECT throws_ok($$SELECT * FROM tickq.request_cancel('nope', NULL, 'ann@laptop')$$,
    'TQ100', 'no kind "nope" in the queue', 'an unknown kind is refused');
SELECT throws_ok($$SELECT * FROM tickq.request_cancel('987654', NULL, 'ann@laptop')$$,
    'TQ100', 'no run 987654 in the queue', 'an unknown run is refused');
SELECT throws_ok($$SELECT * FROM tickq.request_cancel('b', NULL, 'ann@laptop')$$,
    'TQ101', 'kind "b" has no run in progress', 'a kind with no live run is refused');
SELECT throws_ok($$SELECT * FROM tickq.request_cancel('a', repeat('x', 501), 'ann@laptop')$$,
    'TQ102', NULL, 'a reason over 500 characters is refused');
SELECT is((SELECT cancel_requested_at FROM tickq.job_run WHERE kind = 'a'), NULL,
    'the refusals changed nothing');

SELECT is_empty($$SELECT * FROM tickq.cancels_requested('host:1',
    ARRAY[(SELECT run_id FROM tickq.job_kind WHERE name = 'a')], '2026-06-01 10:01:30Z')$$,
    'nothing asked yet; the poll is recorded');
SELECT results_eq($$SELECT kind, leased_by, dispatcher_seen
    FROM tickq.request_cancel('a', 'disk full', 'ann@laptop', '2026-06-01 10:01:40Z')$$,
    $$VALUES ('a', 'host:1', true)$$, 'a cancel by kind names the holder, seen 10 s ago');
SELECT results_eq($$SELECT cancel_by LIKE session_user || '%, claiming to be ann@laptop',
        cancel_role = session_user, cancel_reason, cancel_requested_at
    FROM tickq.job_run WHERE kind = 'a'$$,
    $$VALUES (true, true, 'disk full', '2026-06-01 10:01:40Z'::timestamptz)$$,
    'who, which role, why and when are recorded on the run');
SELECT is_empty($$SELECT * FROM tickq.cancels_requested('host:2',
    ARRAY[(SELECT run_id FROM tickq.job_kind WHERE name = 'a')], '2026-06-01 10:01:41Z')$$,
    'another dispatcher is not told of a run it does not hold');
SELECT results_eq($$SELECT cancel_reason FROM tickq.cancels_requested('host:1',
    ARRAY[(SELECT run_id FROM tickq.job_kind WHERE name = 'a')], '2026-06-01 10:01:42Z')$$,
    $$VALUES ('disk full')$$, 'the holder is told, with why');
SELECT results_eq($$SELECT dispatcher_seen FROM tickq.request_cancel(
    (SELECT run_id FROM tickq.job_kind WHERE name = 'a')::text, NULL, 'bob@ops', '2026-06-01 10:05Z')$$,
    $$VALUES (false)$$, 'by run id; a holder silent for over 30 s is not seen');

SELECT results_eq($$SELECT outcome::text, failure_streak, next_trigger::text, next_due_at
    FROM tickq.report_run((SELECT run_id FROM tickq.job_kind WHERE name = 'a'), 'host:1',
        'cancelled', -15, 'stopped', NULL, '2026-06-01 10:06Z')$$,
    $$VALUES ('cancelled', 2, 'schedule', '2026-06-01 11:00Z'::timestamptz)$$,
    'a cancelled run: the streak kept, no retry, the next slot after now');
SELECT is((SELECT attempts::integer FROM tickq.job_kind WHERE name = 'a'), 0, 'no attempt of the slot left');
SELECT throws_ok($$SELECT * FROM tickq.request_cancel(
    (SELECT last_run_id FROM tickq.job_kind WHERE name = 'a')::text, NULL, 'ann@laptop')$$,
    'TQ101', NULL, 'a run that ended is not running');

SELECT * FROM finish();
ROLLBACK;
