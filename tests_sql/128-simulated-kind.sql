-- The simulator's report has one row shape (tickq.simulated_kind): tickq.simulate reports
-- through tickq.simulation_report, and both return it.
BEGIN;
SELECT plan(2);

SELECT is(
    (SELECT array_agg(DISTINCT p.prorettype::regtype::text) FROM pg_proc AS p
        WHERE p.pronamespace = 'tickq'::regnamespace AND p.proname IN ('simulate', 'simulation_report')),
    ARRAY['tickq.simulated_kind'], 'simulate and simulation_report return the same row type');

SELECT tickq.sync_registry('{"settings": {"slots": 1}, "kinds": {
    "a": {"command": ["x"], "every": 600, "timeout": 60}}}', '2026-06-01 10:00Z');
SELECT results_eq(
    $$SELECT s.kind, s.priority, s.runs, s.starved FROM tickq.simulate(1, NULL, '2026-06-01 10:00Z') AS s
        WHERE s.kind = 'a'$$,
    $$VALUES ('a'::text, 'normal'::tickq.priority, 7, false)$$,
    'simulate: 10:00 through 11:00 of a ten-minute cadence, both ends included, is seven runs, none starved');

SELECT * FROM finish();
ROLLBACK;
