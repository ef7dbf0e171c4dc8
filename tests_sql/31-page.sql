-- The status page's functions: timeline bars and merges, waits and stale marks, slot occupancy
-- never above what the slots allowed, upcoming in the schedule's order, history.
BEGIN;
SELECT plan(14);

SELECT * FROM tickq.sync_registry('{
    "settings": {"slots": 2, "tick": 300, "stale_after": 900},
    "kinds": {
        "every5": {"command": ["x"], "every": 300, "timeout": 60, "priority": "high"},
        "flaky": {"command": ["x"], "every": 3600, "timeout": 60},
        "london": {"command": ["x"], "at": ["01:30", "06:00"], "timezone": "Europe/London",
                   "timeout": 60, "priority": "low"}
    }}', '2026-03-28 00:00Z');
UPDATE tickq.job_kind SET due_at = 'infinity' WHERE name = 'tickq.housekeeping';

-- every5 runs at 00:00, 00:05, 00:10 (ok, ok, ok), flaky fails at 00:00 and is claimed 20 minutes
-- late at 01:20 (stale after 15), then ok.
CREATE FUNCTION pg_temp.cycle(p_kind text, p_at timestamptz, p_outcome tickq.outcome, p_secs int)
RETURNS void LANGUAGE plpgsql AS $$
DECLARE v_run bigint;
BEGIN
    SELECT c.run_id INTO STRICT v_run FROM tickq.claim_manual(p_kind, 'd1', NULL, p_at) AS c;
    UPDATE tickq.job_run SET run_trigger = 'schedule', due_at = (SELECT due_at FROM tickq.job_kind WHERE name = p_kind)
    WHERE id = v_run;
    PERFORM tickq.report_run(v_run, 'd1', p_outcome, 0, 'tail of ' || p_kind, NULL, p_at + p_secs * interval '1 second');
END $$;
SELECT pg_temp.cycle('every5', '2026-03-28 00:00Z', 'ok', 30);
SELECT pg_temp.cycle('every5', '2026-03-28 00:05Z', 'ok', 30);
SELECT pg_temp.cycle('every5', '2026-03-28 00:10Z', 'ok', 30);
SELECT pg_temp.cycle('flaky', '2026-03-28 00:00Z', 'failed', 10);
UPDATE tickq.job_kind SET due_at = '2026-03-28 01:00Z' WHERE name = 'flaky';
SELECT pg_temp.cycle('flaky', '2026-03-28 01:20Z', 'ok', 10);

SELECT results_eq(
    $$SELECT kind, outcome::text, runs FROM tickq.report_timeline_at(24, '2026-03-28 02:00Z')
      ORDER BY kind, bar_start$$,
    $$VALUES ('every5', 'ok', 1), ('every5', 'ok', 1), ('every5', 'ok', 1), ('flaky', 'failed', 1),
        ('flaky', 'ok', 1)$$,
    'runs the page can draw apart are a bar each (the window began with the queue: 8 s a pixel)');
SELECT is(
    (SELECT longest_wait FROM tickq.report_timeline_at(24, '2026-03-28 02:00Z')
     WHERE kind = 'flaky' AND outcome = 'ok'),
    '20 minutes'::interval, 'a bar carries the longest wait of its runs');
SELECT is(
    (SELECT stale_at FROM tickq.report_timeline_at(24, '2026-03-28 02:00Z')
     WHERE kind = 'flaky' AND outcome = 'ok'),
    '2026-03-28 01:15Z'::timestamptz, 'the stale mark sits where the wait passed stale_after');
SELECT is_empty(
    $$SELECT FROM tickq.report_timeline_at(1, '2026-03-28 03:00Z')$$,
    'runs that ended before the window are not drawn');

-- Slots: never more than two held (the limit); the peak is counted inside a step, not averaged.
SELECT is((SELECT max(in_use) FROM tickq.report_slots_at(24, 600, '2026-03-28 02:00Z')), 2,
    'every5 and flaky held a slot each at 00:00: a peak of seconds still shows');
SELECT ok(
    (SELECT bool_and(in_use <= 2) FROM tickq.report_slots_at(24, 600, '2026-03-28 02:00Z')),
    'occupancy never above the slot limit');
SELECT is((SELECT count(*)::integer FROM tickq.report_slots_at(6, 36, '2026-03-28 02:00Z')), 36,
    'one row per step');
SELECT c.run_id AS held FROM tickq.claim_manual('every5', 'd1', NULL, '2026-03-28 01:59Z') AS c \gset
SELECT is((SELECT in_use FROM tickq.report_slots_at(1, 60, '2026-03-28 02:00Z') ORDER BY step_start DESC LIMIT 1),
    1, 'a running run holds its slot up to now');

-- Upcoming: due time first, then next_slot, across the spring-forward night in London
-- (2026-03-29 01:00 UTC: 01:30 local does not exist that day).
SELECT results_eq(
    $$SELECT due_at, kind FROM tickq.upcoming_at(72, 100, '2026-03-28 02:00Z') WHERE kind = 'london'$$,
    $$VALUES ('2026-03-28 01:30Z'::timestamptz, 'london'),
             ('2026-03-28 06:00Z'::timestamptz, 'london'),
             (tickq.next_slot((NULL, NULL, '{01:30,06:00}', NULL, NULL, NULL, NULL, 'Europe/London')::tickq.schedule,
                 '2026-03-28 06:00Z'), 'london'),
             ('2026-03-29 05:00Z'::timestamptz, 'london'),
             ('2026-03-30 00:30Z'::timestamptz, 'london'),
             ('2026-03-30 05:00Z'::timestamptz, 'london'),
             ('2026-03-31 00:30Z'::timestamptz, 'london')$$,
    'upcoming: the kind''s due time (here overdue), then next_slot, across a daylight-saving change');
SELECT is((SELECT count(*)::integer FROM tickq.upcoming_at(24, 5, '2026-03-28 02:00Z')), 5,
    'upcoming stops at its limit');
SELECT is_empty($$SELECT FROM tickq.upcoming_at(24, 100, '2026-03-28 02:00Z') WHERE kind = 'every5'$$,
    'a running kind has no upcoming slot until it is reported');

-- History and one run.
SELECT results_eq(
    $$SELECT outcome::text, waited FROM tickq.kind_history('flaky', 10, '2026-03-28 02:00Z')$$,
    $$VALUES ('ok', '20 minutes'::interval), ('failed', '0'::interval)$$,
    'history: newest first, with the wait from due to claim');
SELECT throws_ok($$SELECT * FROM tickq.kind_history('nope', 10, '2026-03-28 02:00Z')$$, 'TQ003',
    'no kind "nope" in the queue', 'history of an unknown kind names it');
SELECT is((SELECT output_tail FROM tickq.run_detail(
    (SELECT run_id FROM tickq.kind_history('flaky', 1, '2026-03-28 02:00Z')), '2026-03-28 02:00Z')),
    'tail of flaky', 'run_detail gives the whole output tail');

SELECT * FROM finish();
ROLLBACK;
