-- The operator's functions: a dead dispatcher's lease released at once; the next retry due;
-- the health check.
BEGIN;
SELECT plan(13);

SELECT * FROM tickq.sync_registry('{
    "settings": {"slots": 2},
    "kinds": {
        "a": {"command": ["x"], "every": 300, "timeout": 60},
        "b": {"command": ["x"], "every": 300, "timeout": 60}
    }}', '2026-06-01 10:00Z');
UPDATE tickq.job_kind SET due_at = 'infinity' WHERE name = 'tickq.housekeeping';
SELECT is((SELECT count(*)::int FROM tickq.claim_jobs(2, 'host:1', '2026-06-01 10:05Z')), 2,
    'both kinds leased by host:1');

SELECT is(tickq.release_dead_lease((SELECT run_id FROM tickq.job_kind WHERE name = 'a'), 'host:2',
    '2026-06-01 10:06Z'), false, 'a lease held by another dispatcher is left alone');
SELECT is(tickq.release_dead_lease((SELECT run_id FROM tickq.job_kind WHERE name = 'a'), 'host:1',
    '2026-06-01 10:06Z'), true, 'the dead holder''s lease is released');
SELECT results_eq($$SELECT r.outcome::text, r.finished_at, k.run_id IS NULL, k.failure_streak::integer
    FROM tickq.job_run AS r INNER JOIN tickq.job_kind AS k ON r.kind = k.name WHERE r.kind = 'a'$$,
    $$VALUES ('lost', '2026-06-01 10:06Z'::timestamptz, true, 1)$$,
    'as lost at once, the kind free, the streak counted');
SELECT is(tickq.release_dead_lease((SELECT id FROM tickq.job_run WHERE kind = 'a'), 'host:1',
    '2026-06-01 10:07Z'), false, 'a run no longer live is left alone');

-- next_due_at: the retries a tick waits for. 'a' is waiting for its retry since the lost run.
UPDATE tickq.job_kind SET retries = 1 WHERE name = 'b';
-- b failed: a retry after 30s
SELECT * FROM tickq.report_run((SELECT run_id FROM tickq.job_kind WHERE name = 'b'),
    'host:1', 'failed', 1, NULL, NULL, '2026-06-01 10:08Z');
SELECT is(tickq.next_due_at('2026-06-01 10:10Z', '2026-06-01 10:08Z'), '2026-06-01 10:08:30Z'::timestamptz,
    'the retry falls due before the next tick');
SELECT is(tickq.next_due_at('2026-06-01 10:08:30Z', '2026-06-01 10:08Z'), NULL,
    'not one due at or after p_before');
SELECT is(tickq.next_due_at('2026-06-01 11:00Z', '2026-06-01 10:09Z'), NULL,
    'a scheduled slot (a''s next cadence) is not waited for, nor one already due');
UPDATE tickq.job_kind SET irreversible = true, armed_at = NULL WHERE name = 'b';
SELECT is(tickq.next_due_at('2026-06-01 10:10Z', '2026-06-01 10:08Z'), NULL,
    'nor the retry of an irreversible kind no person armed: no claim would take it');
UPDATE tickq.job_kind SET irreversible = false WHERE name = 'b';

-- health_problems. At 10:09 b waits for its retry, a for its next slot; nothing has ticked.
SELECT results_eq($$SELECT kind, problem FROM tickq.health_problems('2026-06-01 10:09Z')$$,
    $$VALUES (NULL::text, 'no_tick')$$, 'no tick has ended yet');
-- a tick ends
SELECT tickq.record_tick('host:9', 'host', '2026-06-01 10:09Z');
UPDATE tickq.settings SET alert_after = 1;
SELECT results_eq($$SELECT kind, problem FROM tickq.health_problems('2026-06-01 10:10Z')$$,
    $$VALUES ('a', 'failing'), ('b', 'failing')$$, 'failing at alert_after');
-- b paused
SELECT tickq.pause_kind('b', p_now => '2026-06-01 10:10Z');
SELECT results_eq($$SELECT kind, problem FROM tickq.health_problems('2026-06-01 10:10Z')$$,
    $$VALUES ('a', 'failing')$$, 'a paused kind is not reported as failing');
-- b resumed
SELECT tickq.resume_kind('b', '2026-06-01 10:10Z');
UPDATE tickq.settings SET alert_after = 3;
-- b claimed
SELECT * FROM tickq.claim_jobs(1, 'host:3', '2026-06-01 10:10Z');
SELECT results_eq($$SELECT kind, problem FROM tickq.health_problems('2026-06-01 11:00Z')$$,
    $$VALUES ('a', 'stale'), ('b', 'stuck'), (NULL, 'no_tick')$$,
    'an hour later: a stale, b stuck past its lease, and no tick for two tick lengths');

SELECT * FROM finish();
ROLLBACK;
