-- The status page at a glance: its window begins when the queue began (a new install uses the
-- whole timeline), a run is a bar of its own unless the page could not draw it apart from the
-- last one (then one bar with the count and the longest run), and the header names the
-- failing kinds.
BEGIN;
SELECT plan(8);

SELECT * FROM tickq.sync_registry('{
    "settings": {"slots": 2, "tick": 60, "alert_after": 2},
    "kinds": {
        "quick": {"command": ["x"], "every": 60, "timeout": 60},
        "broken": {"command": ["x"], "every": 3600, "timeout": 60},
        "down": {"command": ["x"], "every": 3600, "timeout": 60}
    }}', '2026-03-28 00:00Z');
UPDATE tickq.job_kind SET due_at = 'infinity' WHERE name = 'tickq.housekeeping';

CREATE FUNCTION pg_temp.cycle(p_kind text, p_at timestamptz, p_outcome tickq.outcome, p_ms int)
RETURNS void LANGUAGE plpgsql AS $$
DECLARE v_run bigint;
BEGIN
    SELECT c.run_id INTO STRICT v_run FROM tickq.claim_manual(p_kind, 'd1', NULL, p_at) AS c;
    PERFORM tickq.report_run(v_run, 'd1', p_outcome, 0, 'tail', NULL,
        p_at + p_ms * interval '1 millisecond');
END $$;

-- quick: seven 100 ms runs a minute apart from 00:00; broken fails three times, down twice.
SELECT pg_temp.cycle('quick', '2026-03-28 00:00Z'::timestamptz + n * interval '1 minute', 'ok', 100)
FROM generate_series(0, 6) AS n;
SELECT pg_temp.cycle('broken', '2026-03-28 00:00Z'::timestamptz + n * interval '10 minutes', 'failed', 100)
FROM generate_series(0, 2) AS n;
SELECT pg_temp.cycle('down', '2026-03-28 00:00Z'::timestamptz + n * interval '10 minutes', 'failed', 100)
FROM generate_series(0, 1) AS n;

SELECT is(tickq.report_window_start_at(24, '2026-03-28 00:30Z'), '2026-03-28 00:00Z'::timestamptz,
    'a queue half an hour old: the window begins when it began, not 24 hours back');
SELECT is((SELECT window_start FROM tickq.report_header_at(24, '2026-03-28 00:30Z')),
    '2026-03-28 00:00Z'::timestamptz, 'the header gives that window');
SELECT is(tickq.report_window_start_at(24, '2026-03-30 00:00Z'), '2026-03-29 00:00Z'::timestamptz,
    'a queue older than the window: the last 24 hours');
SELECT results_eq(
    $$SELECT runs, longest_run FROM tickq.report_timeline_at(24, '2026-03-28 00:30Z')
      WHERE kind = 'quick' ORDER BY bar_start$$,
    $$SELECT 1, interval '100 milliseconds' FROM generate_series(1, 7)$$,
    'over half an hour (2 s a pixel) seven runs a minute apart are seven bars');
SELECT is_empty(
    $$SELECT FROM tickq.report_timeline_at(24, '2026-03-30 00:00Z') WHERE kind = 'quick'$$,
    'two days later they are out of the window');
SELECT results_eq(
    $$SELECT runs, bar_start, bar_end, longest_run
      FROM tickq.report_timeline_at(48, '2026-03-29 23:00Z') WHERE kind = 'quick'$$,
    $$VALUES (7, '2026-03-28 00:00Z'::timestamptz, '2026-03-28 00:06:00.1Z'::timestamptz,
        interval '100 milliseconds')$$,
    'over the 47 hours since the queue began (188 s a pixel) they are one bar with their count, '
    'real span and longest run');
SELECT is((SELECT failing_kinds FROM tickq.report_header_at(24, '2026-03-28 00:30Z')),
    ARRAY['broken', 'down'], 'the header names the failing kinds, the longest streak first');
SELECT is((SELECT failing FROM tickq.report_header_at(24, '2026-03-28 00:30Z')), 2,
    'as many as it counts');

SELECT * FROM finish();
ROLLBACK;
