-- catch_up: a slot later than a kind's catch_up is recorded as skipped (no command), its slots
-- named; the kind moves to the first slot within the window (claimed in the same claim) or its
-- next one. A skipped run is no failure, and the claim skips before it claims.
BEGIN;
SELECT plan(22);

-- kinds with and without catch_up synced
SELECT * FROM tickq.sync_registry('{"settings": {"stale_after": 900, "slots": 5},
    "kinds": {
        "five": {"command": ["x"], "every": 300, "timeout": 60, "catch_up": 1800},
        "daily": {"command": ["x"], "at": "06:00", "timeout": 60, "catch_up": 1800, "retries": 2},
        "near": {"command": ["x"], "every": 300, "timeout": 60, "catch_up": 1800},
        "plain": {"command": ["x"], "every": 300, "timeout": 60}}}', '2026-04-10 09:00Z');
SELECT is((SELECT catch_up FROM tickq.job_kind WHERE name = 'five'), interval '30 minutes', 'catch_up is kept');
SELECT is((SELECT tickq.registry_entry(k) -> 'catch_up' FROM tickq.job_kind AS k WHERE name = 'five'), '1800'::jsonb,
    'and is part of the entry drift compares');
UPDATE tickq.job_kind SET due_at = 'infinity' WHERE name = 'tickq.housekeeping';
UPDATE tickq.job_kind SET due_at = '2026-04-10 10:00Z' WHERE name IN ('five', 'plain');
UPDATE tickq.job_kind SET due_at = '2026-04-10 11:50Z' WHERE name = 'near';
UPDATE tickq.job_kind SET due_at = '2026-04-09 06:00Z', failure_streak = 2 WHERE name = 'daily';

SELECT ok(NOT EXISTS (SELECT FROM tickq.stale_due_at('2026-04-10 12:03Z') AS s WHERE s.kind IN ('five', 'daily')),
    'a kind due later than its catch_up is not stale: the next claim skips its slot');
SELECT ok(EXISTS (SELECT FROM tickq.stale_due_at('2026-04-10 12:03Z') AS s WHERE s.kind = 'plain'),
    'one without catch_up is');
SELECT results_eq($$SELECT s.kind, s.state FROM tickq.queue_status_at('2026-04-10 12:03Z') AS s
    WHERE s.kind IN ('five', 'plain') ORDER BY s.kind$$, $$VALUES ('five', 'due'), ('plain', 'stale')$$,
    'and status says so too');
SELECT is((SELECT array_agg(c.name ORDER BY c.name) FROM tickq.kinds_to_catch_up('2026-04-10 12:03Z') AS c (name)),
    ARRAY['daily', 'five'],
    'the kinds to catch up: later than their catch_up, not those within it');
CREATE FUNCTION pg_temp.plan_of(p_query text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    v_line text;
    v_plan text := '';
BEGIN
    FOR v_line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || p_query LOOP
        v_plan := v_plan || v_line || E'\n';
    END LOOP;
    RETURN v_plan;
END
$$;
SELECT unalike(pg_temp.plan_of($$SELECT EXISTS (SELECT FROM tickq.kinds_to_catch_up('2026-04-10 12:03Z'))$$),
    '%Function Scan%', 'the claim''s test inlines the function: no call on the hot path');

SELECT results_eq($$SELECT kind, run_trigger::text, slot_at, first_slot_at, slots_covered
    FROM tickq.claim_jobs(4, 'd1', '2026-04-10 12:03Z') ORDER BY kind$$,
    $$VALUES ('five', 'schedule', '2026-04-10 12:00Z'::timestamptz, '2026-04-10 11:35Z'::timestamptz, 6),
        ('near', 'schedule', '2026-04-10 12:00Z'::timestamptz, '2026-04-10 11:50Z'::timestamptz, 3),
        ('plain', 'schedule', '2026-04-10 12:00Z'::timestamptz, '2026-04-10 10:00Z'::timestamptz, 25)$$,
    'the claim runs the slots within 30 minutes (11:35 .. 12:00), all of a kind within them, all of one without');
SELECT results_eq($$SELECT kind, outcome::text, started_at, finished_at, slot_at, first_slot_at, slots_covered,
        dispatcher, slots::integer FROM tickq.job_run WHERE outcome = 'skipped' ORDER BY kind$$,
    $$VALUES ('daily', 'skipped', NULL::timestamptz, '2026-04-10 12:03Z'::timestamptz,
            '2026-04-10 06:00Z'::timestamptz, '2026-04-09 06:00Z'::timestamptz, 2, 'd1', 0),
        ('five', 'skipped', NULL::timestamptz, '2026-04-10 12:03Z'::timestamptz,
            '2026-04-10 11:30Z'::timestamptz, '2026-04-10 10:00Z'::timestamptz, 19, 'd1', 0)$$,
    'each older slot is recorded: one skipped run per kind, no command started, its slots named');
SELECT alike((SELECT output_tail::text FROM tickq.job_run WHERE outcome = 'skipped' AND kind = 'five'),
    '[tickq: skipped 19 slot(s) from % to %: more than catch_up 30m late]', 'the skipped run says why');
SELECT results_eq($$SELECT due_at, run_id IS NULL, failure_streak::integer, attempts::integer, next_trigger::text,
        (SELECT outcome::text FROM tickq.job_run AS r WHERE r.id = k.last_run_id)
    FROM tickq.job_kind AS k WHERE name = 'daily'$$,
    $$VALUES ('2026-04-11 06:00Z'::timestamptz, true, 2, 0, 'schedule', 'skipped')$$,
    'no slot within the window: on to the next one; the streak and the retries are left alone');
SELECT is((SELECT count(*)::integer FROM tickq.take_alerts('2026-04-10 12:03Z') WHERE kind = 'daily'), 0,
    'a skipped run raises no alert');
SELECT is((SELECT s.last_outcome::text FROM tickq.queue_status_at('2026-04-10 12:04Z') AS s WHERE s.kind = 'daily'),
    'skipped', 'status shows the skip as the last run');
SELECT is_empty($$SELECT * FROM tickq.kinds_to_catch_up('2026-04-10 12:03Z')$$, 'nothing is left to catch up');

-- A paused kind is not skipped while paused: when its pause ends, its old slots are.
UPDATE tickq.job_kind SET due_at = '2026-04-11 06:00Z', paused_until = '2026-04-13 05:00Z' WHERE name = 'daily';
SELECT is((SELECT count(*)::integer FROM tickq.claim_jobs(1, 'd1', '2026-04-12 12:00Z')), 0, 'paused: nothing claimed');
SELECT is((SELECT count(*)::integer FROM tickq.job_run WHERE kind = 'daily' AND outcome = 'skipped'), 1,
    'and nothing skipped while paused');
SELECT is((SELECT count(*)::integer FROM tickq.claim_jobs(5, 'd1', '2026-04-13 06:10Z') WHERE kind = 'daily'), 1,
    'after its pause: the slot 10 minutes ago runs');
SELECT results_eq($$SELECT slot_at, first_slot_at, slots_covered FROM tickq.job_run
    WHERE kind = 'daily' AND outcome = 'skipped' ORDER BY id DESC LIMIT 1$$,
    $$VALUES ('2026-04-12 06:00Z'::timestamptz, '2026-04-11 06:00Z'::timestamptz, 2)$$,
    'the two it slept through while paused are skipped first');

SELECT throws_ok($$SELECT * FROM tickq.report_run((SELECT id FROM tickq.job_run WHERE kind = 'five'
    AND outcome = 'running'), 'd1', 'skipped', NULL, NULL, NULL, '2026-04-10 12:04Z')$$, NULL, NULL,
    'a dispatcher cannot report a run as skipped');

SELECT is((SELECT array_agg(p.key || ': ' || p.problem ORDER BY p.key) FROM tickq.registry_problems(
    '{"kinds": {"x": {"command": ["x"], "every": 60, "catch_up": 0, "timeout": 60}}}') AS p),
    ARRAY['catch_up: must be a duration from 1s to 366d, got 0s'],
    'registry_problems refuses a catch_up out of its bounds, naming the key');
SELECT throws_ok($$SELECT tickq.sync_registry('{"kinds": {"x": {"command": ["x"], "every": 60,
    "catch_up": "30m", "timeout": 60}}}')$$, 'TQ002',
    'registry: kind "x", key "catch_up": must be a duration from 1s to 366d, got "30m"s',
    'and so does a sync from JSON');
SELECT is((SELECT l.high FROM tickq.registry_limits() AS l WHERE l.key = 'catch_up'), 366 * 86400::numeric,
    'its bounds are a row of registry_limits');

SELECT * FROM finish();
ROLLBACK;
