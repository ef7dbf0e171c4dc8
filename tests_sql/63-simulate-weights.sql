-- The simulator's clock in parts with weights: a run of weight w holds w slot rows, and a part
-- that goes on from an earlier one picks it up once (reported once, at its own end), not once
-- per slot row it holds.
BEGIN;
SELECT plan(3);

-- three slots; heavy (weight 3) runs 20 minutes, so its run goes on past a part of 15
-- a kind of weight 3 among three slots
SELECT * FROM tickq.sync_registry('{
    "settings": {"slots": 3, "tick": 60, "stale_after": 3600, "housekeeping_every": 86400},
    "kinds": {
        "heavy": {"command": ["x"], "every": 3600, "timeout": 1200, "weight": 3},
        "light": {"command": ["x"], "every": 3600, "timeout": 600}
    }}', '2026-06-01 09:00Z');
UPDATE tickq.job_kind SET due_at = '2026-06-01 10:00Z' WHERE name = 'heavy';
UPDATE tickq.job_kind SET due_at = '2026-06-01 10:01Z' WHERE name IN ('light', 'tickq.housekeeping');

SELECT tickq.simulation_start('2026-06-01 10:00Z');
SELECT tickq.simulate_events('2026-06-01 10:14:59.999999Z', NULL, '2026-06-01 10:00Z');
SELECT is((SELECT count(*)::integer FROM tickq.slot WHERE run_id IS NOT NULL), 3,
    'the first part ends with heavy''s run in all three slot rows');
-- the next part goes on from it
SELECT tickq.simulate_events('2026-06-01 10:29:59.999999Z', NULL, '2026-06-01 10:15Z');
SELECT results_eq(
    $$SELECT kind, outcome::text, finished_at FROM tickq.job_run WHERE kind = 'heavy' ORDER BY id$$,
    $$VALUES ('heavy', 'ok', '2026-06-01 10:20Z'::timestamptz)$$,
    'heavy''s run is reported once, at the end of its 20 minutes');
SELECT results_eq(
    $$SELECT claimed_at FROM tickq.job_run WHERE kind = 'light' ORDER BY id$$,
    $$VALUES ('2026-06-01 10:20Z'::timestamptz)$$,
    'and light, waiting behind it, is claimed when it ends');

SELECT * FROM finish();
ROLLBACK;
