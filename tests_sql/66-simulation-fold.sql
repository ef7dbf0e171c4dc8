-- Windows simulated apart, each in a database of its own, folded in their order
-- (tickq.simulation_fold) give what merging them one after the other in one database gives
-- (tickq.simulation_merge, which folds each window's report into the earlier ones).
BEGIN;
SELECT plan(4);

-- one slot; a (high) holds it for its half-hour timeout while b (low) waits
-- two hourly kinds on one slot
SELECT * FROM tickq.sync_registry('{
    "settings": {"slots": 1, "tick": 300, "stale_after": 900, "housekeeping_every": 86400},
    "kinds": {
        "a": {"command": ["x"], "every": 3600, "timeout": 1800, "priority": "high"},
        "b": {"command": ["x"], "every": 3600, "timeout": 600, "priority": "low"}
    }}', '2026-06-01 09:00Z');

-- window 1 with every run taking its timeout (b waits 30 minutes), window 2 with a taking a
-- minute (b waits one): each window's report alone, and merged one after the other
CREATE TEMP TABLE alone (n integer, worst jsonb) ON COMMIT DROP;
SELECT tickq.simulation_start('2026-06-01 10:00Z');
SELECT tickq.simulate_events('2026-06-01 11:00Z', NULL, '2026-06-01 10:00Z');
INSERT INTO alone SELECT 1, tickq.simulation_merge(NULL, 1, '2026-06-01 11:00Z', '2026-06-01 10:00Z');
INSERT INTO alone SELECT 0, worst FROM alone WHERE n = 1;
SELECT tickq.simulation_start('2026-06-01 12:00Z');
SELECT tickq.simulate_events('2026-06-01 13:00Z', '{"a": 60}', '2026-06-01 12:00Z');
INSERT INTO alone SELECT 2, tickq.simulation_merge(NULL, 2, '2026-06-01 13:00Z', '2026-06-01 12:00Z');
UPDATE alone SET worst = tickq.simulation_merge(worst, 2, '2026-06-01 13:00Z', '2026-06-01 12:00Z') WHERE n = 0;

SELECT results_eq(
    $$SELECT * FROM tickq.simulation_worst(tickq.simulation_fold(
        (SELECT worst FROM alone WHERE n = 1), (SELECT worst FROM alone WHERE n = 2)))$$,
    $$SELECT * FROM tickq.simulation_worst((SELECT worst FROM alone WHERE n = 0))$$,
    'the two windows folded apart give what merging them one after the other gives');
SELECT results_eq(
    $$SELECT w.kind, w.runs, w.longest_wait, w.starved, w.behind, w.in_window
      FROM tickq.simulation_worst(tickq.simulation_fold(
          (SELECT worst FROM alone WHERE n = 1), (SELECT worst FROM alone WHERE n = 2))) AS w$$,
    $$VALUES ('a', 4, '0'::interval, false, NULL::text[], 1),
             ('tickq.housekeeping', 0, NULL, false, NULL, 1),
             ('b', 2, '30 minutes', true, ARRAY['a'], 1)$$,
    'the runs add up; the longer wait (the first window''s) and what it waited behind are kept');
SELECT results_eq(
    $$SELECT w.kind, w.longest_wait, w.worst_due_at, w.in_window
      FROM tickq.simulation_worst(tickq.simulation_fold(
          '[{"kind": "b", "lane": "low", "runs": 1, "longest_wait": "00:01:00", "starved": false,
             "worst_due_at": "2026-06-01T09:00:00Z", "behind": null, "in_window": 1}]',
          (SELECT worst FROM alone WHERE n = 2))) AS w WHERE w.kind = 'b'$$,
    $$VALUES ('b', '1 minute'::interval, '2026-06-01 09:00Z'::timestamptz, 1)$$,
    'a tie keeps the earlier side');
SELECT results_eq(
    $$SELECT * FROM tickq.simulation_worst(tickq.simulation_fold(NULL, (SELECT worst FROM alone WHERE n = 1)))$$,
    $$SELECT * FROM tickq.simulation_worst((SELECT worst FROM alone WHERE n = 1))$$,
    'folded into nothing, a window is itself');

SELECT finish();
ROLLBACK;
