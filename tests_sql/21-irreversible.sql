-- Irreversible kinds: never claimed by a schedule until a person's successful manual run arms
-- them; a failed one leaves them unarmed; a new command disarms them (logged as drift).
BEGIN;
SELECT plan(23);

-- an irreversible kind syncs
SELECT * FROM tickq.sync_registry('{
    "settings": {"slots": 3},
    "kinds": {
        "payout": {"command": ["bin/payout"], "every": 60, "timeout": 60, "irreversible": true,
                   "priority": "urgent"},
        "plain": {"command": ["x"], "every": 60, "timeout": 60, "priority": "low"}
    }}', '2026-06-01 10:00Z');
UPDATE tickq.job_kind SET due_at = 'infinity' WHERE name = 'tickq.housekeeping';

SELECT results_eq($$SELECT kind FROM tickq.claim_jobs(3, 'd1', '2026-06-01 12:00Z')$$,
    $$VALUES ('plain')$$, 'an unarmed irreversible kind is never claimed, however long it was due');
SELECT is((SELECT state FROM tickq.queue_status_at('2026-06-01 12:00Z') WHERE kind = 'payout'), 'unarmed',
    'queue_status shows it as unarmed');
SELECT is_empty($$SELECT * FROM tickq.stale_due_at('2026-06-01 12:00Z') WHERE kind = 'payout'$$,
    'it is not stale: it waits for a person, not a slot');

-- whatever a row says: arming by hand, without a run behind it, is refused
SELECT throws_ok($$UPDATE tickq.job_kind SET armed_at = now(), armed_by = 'mallory' WHERE name = 'payout'$$,
    '23514', NULL, 'arming without a run is refused');
SELECT throws_ok($$UPDATE tickq.job_kind SET armed_at = now(), armed_by = 'mallory',
    armed_run_id = (SELECT min(id) FROM tickq.job_run) WHERE name = 'payout'$$,
    '23514', NULL, 'arming with a run of another kind is refused');
UPDATE tickq.job_kind SET enabled = true, due_at = '2026-06-01 10:00Z' WHERE name = 'payout';
SELECT is_empty($$SELECT * FROM tickq.claim_jobs(3, 'd1', '2026-06-01 12:00Z') WHERE kind = 'payout'$$,
    'still never claimed');

-- a manual run needs a person
SELECT throws_ok($$SELECT * FROM tickq.claim_manual('payout', 'me', NULL, '2026-06-01 12:01Z')$$, 'TQ030', NULL,
    'a manual run nobody confirmed is refused for an unarmed irreversible kind');
SELECT throws_ok($$SELECT * FROM tickq.claim_manual('payout', 'me', '  ', '2026-06-01 12:01Z')$$, 'TQ030', NULL,
    'a blank person is nobody');

-- a failed first run leaves it unarmed
SELECT is((SELECT outcome::text FROM tickq.report_run(
    (SELECT run_id FROM tickq.claim_manual('payout', 'me', 'alice', '2026-06-01 12:01Z')),
    'me', 'failed', 1, 'no', NULL, '2026-06-01 12:02Z')), 'failed', 'a first run by hand that fails');
SELECT is((SELECT armed_at FROM tickq.job_kind WHERE name = 'payout'), NULL, 'leaves the kind unarmed');
SELECT is((SELECT run_by FROM tickq.job_run WHERE kind = 'payout'), 'alice', 'the run records who started it');

-- a successful one arms it, recording who, when and the run
SELECT is((SELECT outcome::text FROM tickq.report_run(
    (SELECT run_id FROM tickq.claim_manual('payout', 'me', 'alice', '2026-06-01 12:03Z')),
    'me', 'ok', 0, 'paid', NULL, '2026-06-01 12:04Z')), 'ok', 'a first run by hand that succeeds');
SELECT results_eq($$SELECT armed_at, armed_by, armed_run_id FROM tickq.job_kind WHERE name = 'payout'$$,
    $$SELECT '2026-06-01 12:04Z'::timestamptz, 'alice', max(id) FROM tickq.job_run WHERE kind = 'payout'$$,
    'arms the kind: when, who and the run');
SELECT is((SELECT state FROM tickq.queue_status_at('2026-06-01 12:04:30Z') WHERE kind = 'payout'), 'waiting',
    'an armed kind waits for its slot like any other');
SELECT results_eq($$SELECT kind FROM tickq.claim_jobs(3, 'd1', '2026-06-01 12:10Z') WHERE kind = 'payout'$$,
    $$VALUES ('payout')$$, 'and is claimed by its schedule');
-- the scheduled run reports
SELECT * FROM tickq.report_run((SELECT run_id FROM tickq.job_kind WHERE name = 'payout'),
    'd1', 'ok', 0, NULL, NULL, '2026-06-01 12:11Z');

-- the same registry again keeps it armed; a new command disarms it, logged as drift
SELECT is_empty($$SELECT * FROM tickq.sync_registry('{"settings": {"slots": 3}, "kinds": {
    "payout": {"command": ["bin/payout"], "every": 60, "timeout": 60, "irreversible": true, "priority": "urgent"},
    "plain": {"command": ["x"], "every": 60, "timeout": 60, "priority": "low"}}}', '2026-06-01 12:20Z')
    WHERE kind = 'payout'$$, 'an unchanged registry keeps it armed, without drift');
SELECT results_eq($$SELECT field, registry_value IS NULL FROM tickq.sync_registry('{"settings": {"slots": 3},
    "kinds": {
    "payout": {"command": ["bin/payout", "--all"], "every": 60, "timeout": 60, "irreversible": true,
               "priority": "urgent"},
    "plain": {"command": ["x"], "every": 60, "timeout": 60, "priority": "low"}}}', '2026-06-01 12:30Z')
    WHERE kind = 'payout' ORDER BY field$$,
    $$VALUES ('armed', true), ('command', false)$$, 'a new command disarms it and the drift says so');
SELECT results_eq($$SELECT armed_at, armed_by, armed_run_id FROM tickq.job_kind WHERE name = 'payout'$$,
    $$VALUES (NULL::timestamptz, NULL::text, NULL::bigint)$$, 'unarmed again');
SELECT is_empty($$SELECT * FROM tickq.claim_jobs(3, 'd1', '2026-06-01 14:00Z') WHERE kind = 'payout'$$,
    'and never claimed until a new first run by hand');
SELECT throws_ok($$UPDATE tickq.job_kind SET armed_at = now(), armed_by = 'alice',
    armed_run_id = (SELECT max(id) FROM tickq.job_run WHERE kind = 'payout' AND run_trigger = 'manual')
    WHERE name = 'payout'$$,
    '23514', NULL, 'the old command''s first run cannot arm the new one');

-- a new first run by hand arms the new command; the arming run may be pruned later
SELECT is((SELECT outcome::text FROM tickq.report_run(
    (SELECT run_id FROM tickq.claim_manual('payout', 'me', 'bob', '2026-06-01 14:01Z')),
    'me', 'ok', 0, NULL, NULL, '2026-06-01 14:02Z')), 'ok', 'a first run by hand of the new command');
DELETE FROM tickq.job_run WHERE id = (SELECT armed_run_id FROM tickq.job_kind WHERE name = 'payout');
SELECT results_eq($$SELECT field FROM tickq.sync_registry('{"settings": {"slots": 3}, "kinds": {
    "payout": {"command": ["bin/payout", "--all"], "every": 60, "timeout": 60, "irreversible": true,
               "priority": "high"},
    "plain": {"command": ["x"], "every": 60, "timeout": 60, "priority": "low"}}}', '2026-06-01 14:30Z')
    WHERE kind = 'payout'$$, $$VALUES ('priority')$$,
    'a sync that changes something else keeps it armed, even once the arming run is pruned');
SELECT is((SELECT armed_by FROM tickq.job_kind WHERE name = 'payout'), 'bob', 'armed by the second person');

SELECT * FROM finish();
ROLLBACK;
