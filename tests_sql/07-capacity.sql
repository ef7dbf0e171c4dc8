-- The capacity invariant: runs per tick and slot share per kind, summed per lane and in total.
BEGIN;
SELECT plan(7);

SELECT * FROM tickq.sync_registry('{
    "settings": {"slots": 3, "tick": 300, "capacity_margin": 0.25},
    "kinds": {
        "fast": {"command": ["x"], "every": 60, "timeout": 120, "priority": "urgent"},
        "quarter": {"command": ["x"], "every": 900, "timeout": 300},
        "long": {"command": ["x"], "every": 300, "timeout": 600, "priority": "low"},
        "twice_weekly": {"command": ["x"], "at": ["06:00", "18:00"], "on": ["mon", "fri"], "timeout": 60},
        "off": {"command": ["x"], "every": 60, "timeout": 60, "enabled": false}
    }}', '2026-06-01 10:00Z');

SELECT results_eq(
    $$SELECT kind, runs_per_tick, expected_duration, duration_source, slot_share
      FROM tickq.capacity_at('2026-06-01 10:00Z') ORDER BY kind$$,
    $$VALUES
        ('fast', 1.0000, '2 minutes'::interval, 'timeout', 0.4000),
        ('long', 1.0000, '10 minutes'::interval, 'timeout', 1.0000),
        ('quarter', 0.3333, '5 minutes'::interval, 'timeout', 0.3333),
        ('tickq.housekeeping', 0.3333, '1 minute'::interval, 'timeout', 0.0667),
        ('twice_weekly', 0.0020, '1 minute'::interval, 'timeout', 0.0004)$$,
    'per kind: a cadence at or below the tick asks for 1 run, a slower one tick/cadence, a calendar '
    || 'its weekly slots over the week''s ticks; the share is capped at one slot; disabled kinds do not count'
);
SELECT results_eq(
    $$SELECT lane, kinds, slot_share, budget, fits FROM tickq.capacity_total_at('2026-06-01 10:00Z')$$,
    $$VALUES ('urgent', 1, 0.4000, 2.2500, NULL::boolean),
             ('normal', 3, 0.4004, 2.2500, NULL),
             ('low', 1, 1.0000, 2.2500, NULL),
             ('total', 5, 1.8004, 2.2500, true)$$,
    'lanes and the total; 1.80 of a 2.25 budget (3 slots less 25%) fits'
);

-- once a kind has enough successful runs, its expected duration is their 95th percentile
INSERT INTO tickq.job_run (kind, attempt, run_trigger, dispatcher, claimed_at, finished_at, outcome, duration)
SELECT
    'fast' AS kind, 1 AS attempt, 'schedule'::tickq.run_trigger AS run_trigger, 'd' AS dispatcher,
    x.t AS claimed_at, x.t + v.s * interval '1 second' AS finished_at, 'ok'::tickq.outcome AS outcome,
    v.s * interval '1 second' AS duration
FROM (VALUES (10), (20), (30), (40)) AS v (s)
CROSS JOIN LATERAL (SELECT '2026-06-01 09:00Z'::timestamptz + v.s * interval '1 minute' AS t) AS x;
SELECT is((SELECT duration_source FROM tickq.capacity_at('2026-06-01 10:00Z') WHERE kind = 'fast'), 'timeout',
    'four runs are not enough history');
INSERT INTO tickq.job_run (kind, attempt, run_trigger, dispatcher, claimed_at, finished_at, outcome, duration)
VALUES ('fast', 1, 'schedule', 'd', '2026-06-01 09:50Z', '2026-06-01 09:50:50Z', 'ok', '50 seconds'),
       ('fast', 1, 'schedule', 'd', '2026-06-01 09:55Z', '2026-06-01 09:59Z', 'failed', '4 minutes');
SELECT results_eq(
    $$SELECT expected_duration, duration_source,
        slot_share FROM tickq.capacity_at('2026-06-01 10:00Z') WHERE kind = 'fast'$$,
    $$VALUES ('48 seconds'::interval, 'p95 of 5 runs', 0.1600)$$,
    'five successful runs: p95 of 10..50 s is 48 s (failed runs do not count), share 48/300');
SELECT is((SELECT expected_duration FROM tickq.capacity WHERE kind = 'fast'), '48 seconds'::interval,
    'the view answers the same at now()');

-- one more slot-hungry kind breaks the budget
-- a second always-busy kind
SELECT * FROM tickq.sync_registry('{
    "settings": {"slots": 3, "tick": 300, "capacity_margin": 0.25},
    "kinds": {
        "fast": {"command": ["x"], "every": 60, "timeout": 120, "priority": "urgent"},
        "quarter": {"command": ["x"], "every": 900, "timeout": 300},
        "long": {"command": ["x"], "every": 300, "timeout": 600, "priority": "low"},
        "longer": {"command": ["x"], "every": 300, "timeout": 900, "priority": "low"},
        "twice_weekly": {"command": ["x"], "at": ["06:00", "18:00"], "on": ["mon", "fri"], "timeout": 60}
    }}', '2026-06-01 10:00Z');
SELECT results_eq(
    $$SELECT slot_share, fits FROM tickq.capacity_total_at('2026-06-01 10:00Z') WHERE lane = 'total'$$,
    $$VALUES (2.5604, false)$$, 'total 2.56 > 2.25: does not fit');
SELECT results_eq(
    $$SELECT runs_per_tick FROM tickq.capacity_total_at('2026-06-01 10:00Z') WHERE lane = 'total'$$,
    $$VALUES (3.6686)$$, 'runs per tick are summed beside the shares');

SELECT * FROM finish();
ROLLBACK;
