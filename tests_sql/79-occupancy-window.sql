-- The status page's slot and pool plots share the timeline's axis: on a queue younger than the
-- window, the axis begins when the queue began (report_window_start_at) and so do the plot's
-- steps, each a 600th of that span; a run of two seconds is drawn as two seconds, not as a
-- step of 24 hours / 600 = 144 s.
BEGIN;
SELECT plan(4);

-- a queue made at 10:00
SELECT * FROM tickq.sync_registry('{
    "settings": {"slots": 6},
    "pools": {"api": {"slots": 1}},
    "kinds": {"quick": {"command": ["x"], "every": 60, "timeout": 60, "pools": ["api"]}}
    }', '2026-06-01 10:00Z');
UPDATE tickq.job_kind SET due_at = 'infinity' WHERE name = 'tickq.housekeeping';

-- One run of 2 s at 10:03, the page asked for at 10:06 (the queue is 6 minutes old).
-- a run of two seconds
SELECT tickq.report_run(c.run_id, 'd1', 'ok', 0, '', NULL, '2026-06-01 10:03:02Z')
    FROM tickq.claim_manual('quick', 'd1', NULL, '2026-06-01 10:03Z') AS c;

SELECT is((SELECT min(step_start) FROM tickq.report_slots_at(24, 600, '2026-06-01 10:06Z')),
    tickq.report_window_start_at(24, '2026-06-01 10:06Z'),
    'the slot plot begins where the page''s axis does');
SELECT is((SELECT count(*) FROM tickq.report_slots_at(24, 600, '2026-06-01 10:06Z')
    WHERE step_start >= tickq.report_window_start_at(24, '2026-06-01 10:06Z')), 600::bigint,
    'all 600 steps on the axis, none before it');
SELECT is((SELECT extract(EPOCH FROM sum(w.width)) FROM (
        SELECT in_use, lead(step_start) OVER (ORDER BY step_start) - step_start AS width
        FROM tickq.report_slots_at(24, 600, '2026-06-01 10:06Z')) AS w WHERE w.in_use > 0),
    2.4, 'the run holds a slot in four steps of 0.6 s: 2.4 s of the plot, not 144 s');
SELECT is((SELECT (steps -> 0 ->> 0)::timestamptz FROM tickq.report_pools_at(24, 600, 8, 3, '2026-06-01 10:06Z')
    WHERE pool = 'api'), tickq.report_window_start_at(24, '2026-06-01 10:06Z'),
    'a pool''s plot begins on the same axis');

SELECT * FROM finish();
