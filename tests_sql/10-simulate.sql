-- The simulator and aging: an over-subscribed queue makes every lane late, none starves for days;
-- a queue that fits has no kind waiting past stale_after.
BEGIN;
SELECT plan(5);

-- One slot, two kinds that each want it all the time, and an hourly low kind.
-- an over-subscribed queue
SELECT * FROM tickq.sync_registry('{
    "settings": {"slots": 1, "tick": 300, "stale_after": 900, "housekeeping_every": 86400},
    "kinds": {
        "u": {"command": ["x"], "every": 60, "timeout": 290, "priority": "urgent"},
        "n": {"command": ["x"], "every": 60, "timeout": 290},
        "l": {"command": ["x"], "every": 3600, "timeout": 60, "priority": "low"}
    }}', '2026-06-01 10:00Z');
UPDATE tickq.job_kind SET due_at = 'infinity' WHERE name = 'tickq.housekeeping';
SELECT results_eq(
    $$SELECT kind, longest_wait, starved FROM tickq.simulate(1, NULL, '2026-06-01 10:00Z') WHERE kind = 'l'$$,
    $$VALUES ('l', '19 minutes 20 seconds'::interval, true)$$,
    'the low kind waits past stale_after, then aging puts it before fresher urgent work');
SELECT ok((SELECT max(longest_wait) < interval '40 minutes' FROM tickq.simulate(24, NULL, '2026-06-01 11:00Z')),
    'over 24 hours no kind waits more than twice stale_after: late, but nobody starves for days');
SELECT is((SELECT count(*)::int FROM tickq.job_kind WHERE run_id IS NOT NULL), 1,
    'the simulation ends with at most the slot limit leased');

-- A queue that fits: the same kinds, three slots and durations that leave room.
-- a queue that fits
SELECT * FROM tickq.sync_registry('{
    "settings": {"slots": 3, "tick": 300, "stale_after": 900, "housekeeping_every": 900},
    "kinds": {
        "u": {"command": ["x"], "every": 300, "timeout": 60, "priority": "urgent"},
        "n": {"command": ["x"], "every": 300, "timeout": 120},
        "l": {"command": ["x"], "every": 3600, "timeout": 60, "priority": "low"}
    }}', '2026-06-03 10:00Z');
-- start from a quiet queue: every kind due now, no lease left from the run above
UPDATE tickq.job_kind SET due_at = '2026-06-03 10:00Z', run_id = NULL, leased_by = NULL, leased_until = NULL;
UPDATE tickq.slot SET run_id = NULL;
UPDATE tickq.job_run SET outcome = 'lost', finished_at = '2026-06-03 10:00Z' WHERE outcome = 'running';
SELECT is_empty($$SELECT * FROM tickq.simulate(24, NULL, '2026-06-03 10:00Z') WHERE starved$$,
    'nobody starves when the capacity invariant holds');
-- from a steady start (every kind at its first slot, the runs left above gone), 10:00 to 10:59
SELECT tickq.simulation_start('2026-06-05 10:00Z');
SELECT results_eq(
    $$SELECT kind, runs FROM tickq.simulate(59 / 60.0, '{"n": 10}', '2026-06-05 10:00Z') ORDER BY kind$$,
    $$VALUES ('l', 1), ('n', 12), ('tickq.housekeeping', 4), ('u', 12)$$,
    'an hour: a 5-minute kind runs 12 times, an hourly one once; given durations replace timeouts');

SELECT * FROM finish();
ROLLBACK;
