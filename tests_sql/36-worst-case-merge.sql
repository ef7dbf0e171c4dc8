-- The simulator's clock in parts, the window `tickq simulate` replays, and each kind's worst wait
-- merged over the windows `tickq check` simulates.
BEGIN;
SELECT plan(10);

-- one slot; a (high) holds it for its half-hour timeout while b (low) waits
-- two hourly kinds on one slot
SELECT * FROM tickq.sync_registry('{
    "settings": {"slots": 1, "tick": 300, "stale_after": 900, "housekeeping_every": 86400},
    "kinds": {
        "a": {"command": ["x"], "every": 3600, "timeout": 1800, "priority": "high"},
        "b": {"command": ["x"], "every": 3600, "timeout": 600, "priority": "low"}
    }}', '2026-06-01 09:00Z');

SELECT results_eq(
    $$SELECT part_from, part_until FROM tickq.simulation_parts('2026-06-01 10:30Z', '2026-06-01 10:00Z')$$,
    $$VALUES ('2026-06-01 10:00Z'::timestamptz, '2026-06-01 10:14:59.999999Z'::timestamptz),
             ('2026-06-01 10:15Z', '2026-06-01 10:29:59.999999Z'),
             ('2026-06-01 10:30Z', '2026-06-01 10:30Z')$$,
    'the clock moves in parts of 15 minutes, each ending just before the next one''s first tick');
SELECT results_eq(
    $$SELECT part_from, part_until FROM tickq.simulation_parts('2026-06-01 10:10Z', '2026-06-01 10:00Z')$$,
    $$VALUES ('2026-06-01 10:00Z'::timestamptz, '2026-06-01 10:10Z'::timestamptz)$$,
    'a window shorter than a part is one part');
SELECT results_eq(
    $$SELECT part_from, part_until FROM tickq.simulation_parts('2026-06-01 10:40Z', '2026-06-01 10:05Z')$$,
    $$VALUES ('2026-06-01 10:05Z'::timestamptz, '2026-06-01 10:14:59.999999Z'::timestamptz),
             ('2026-06-01 10:15Z', '2026-06-01 10:29:59.999999Z'),
             ('2026-06-01 10:30Z', '2026-06-01 10:40Z')$$,
    'after a shorter first part the parts begin on the quarter hours, where the clock rests most');
SELECT results_eq(
    $$SELECT part_from, part_until FROM tickq.simulation_parts('2026-06-01 10:40Z', '2026-06-01 10:02Z')$$,
    $$VALUES ('2026-06-01 10:02Z'::timestamptz, '2026-06-01 10:16:59.999999Z'::timestamptz),
             ('2026-06-01 10:17Z', '2026-06-01 10:31:59.999999Z'),
             ('2026-06-01 10:32Z', '2026-06-01 10:40Z')$$,
    'but every part starts on a tick: a window whose ticks miss the quarter hours keeps its own');

SELECT results_eq(
    $$SELECT starts_at, hours, period, warm_up, dst_zone
      FROM tickq.simulation_replay_window(NULL, '2026-06-01 10:00Z')$$,
    $$VALUES ('2026-06-01 10:00Z'::timestamptz, 24.25::numeric, '1 day'::interval, '0'::interval, NULL::text)$$,
    'simulate replays from now without a warm-up: the daily housekeeping once, and stale_after');
SELECT is((SELECT hours FROM tickq.simulation_replay_window(2, '2026-06-01 10:00Z')), 2::numeric,
    'or the hours it is given');

-- window 1 with every run taking its timeout: b waits 30 minutes behind a
SELECT tickq.simulation_start('2026-06-01 10:00Z');
SELECT tickq.simulate_events('2026-06-01 11:00Z', NULL, '2026-06-01 10:00Z');
CREATE TEMP TABLE merged ON COMMIT DROP AS
SELECT tickq.simulation_merge(NULL, 1, '2026-06-01 11:00Z', '2026-06-01 10:00Z') AS worst;
-- window 2 with a taking a minute: b waits one minute
SELECT tickq.simulation_start('2026-06-01 12:00Z');
SELECT tickq.simulate_events('2026-06-01 13:00Z', '{"a": 60}', '2026-06-01 12:00Z');
UPDATE merged SET worst = tickq.simulation_merge(worst, 2, '2026-06-01 13:00Z', '2026-06-01 12:00Z');

SELECT results_eq(
    $$SELECT w.kind, w.lane, w.runs, w.longest_wait, w.starved, w.worst_due_at, w.behind, w.in_window
      FROM merged AS m CROSS JOIN LATERAL tickq.simulation_worst(m.worst) AS w$$,
    $$VALUES ('a', 'high', 4, '0'::interval, false, NULL::timestamptz, NULL::text[], 1),
             ('tickq.housekeeping', 'normal', 0, NULL, false, NULL, NULL, 1),
             ('b', 'low', 2, '30 minutes', true, '2026-06-01 10:00Z', ARRAY['a'], 1)$$,
    'per kind the longest wait of any window (a tie: the earlier window), the runs of both windows');

-- a later window that waits longer wins; a kind only one side knows is kept
SELECT results_eq(
    $$SELECT w.kind, w.runs, w.longest_wait, w.starved, w.behind, w.in_window
      FROM tickq.simulation_worst(tickq.simulation_merge(
          '[{"kind": "b", "lane": "low", "runs": 5, "longest_wait": "00:00:30", "starved": false,
             "worst_due_at": "2026-06-01T09:00:00Z", "behind": null, "in_window": 1},
            {"kind": "gone", "lane": "urgent", "runs": 1, "longest_wait": null, "starved": false,
             "worst_due_at": null, "behind": null, "in_window": 1}]',
          2, '2026-06-01 13:00Z', '2026-06-01 12:00Z')) AS w$$,
    $$VALUES ('gone', 1, NULL::interval, false, NULL::text[], 1),
             ('a', 2, '0'::interval, false, NULL, 2),
             ('tickq.housekeeping', 0, NULL, false, NULL, 2),
             ('b', 6, '1 minute', false, NULL, 2)$$,
    'the longer wait of the later window replaces the earlier one''s, and runs add up');
SELECT is(
    (SELECT w.starved FROM tickq.simulation_worst(tickq.simulation_merge(
        '[{"kind": "b", "lane": "low", "runs": 1, "longest_wait": "01:00:00", "starved": true,
           "worst_due_at": "2026-06-01T09:00:00Z", "behind": ["a"], "in_window": 1}]',
        2, '2026-06-01 13:00Z', '2026-06-01 12:00Z')) AS w WHERE w.kind = 'b'),
    true, 'a kind any window starved stays starved');
SELECT is_empty($$SELECT * FROM tickq.simulation_worst(NULL)$$, 'nothing merged yet: no rows');

SELECT finish();
ROLLBACK;
