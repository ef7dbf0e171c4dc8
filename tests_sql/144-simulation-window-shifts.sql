-- The shifts a window's copies may use (tickq.simulation_window_breaks, 19_simulate_window.sql):
-- a day and a week, each only when shorter than the window. A month end's window (three days
-- and some minutes) can copy no week back, and reading the week's breaks of every kind with day
-- rules over it cost as much as the day's; an eight-day window keeps both, and the day's breaks
-- are the same either way.
BEGIN;
SELECT plan(5);

SELECT * FROM tickq.sync_registry('{
    "settings": {"slots": 2, "tick": 60, "stale_after": 900, "housekeeping_every": 86400},
    "kinds": {
        "weekly": {"command": ["x"], "cron": "30 9 * * 1", "timeout": 300},
        "monthly": {"command": ["x"], "cron": "0 3 1 * *", "timeout": 300},
        "hourly": {"command": ["x"], "cron": "7 * * * *", "timeout": 300}
    }}', '2027-08-28 09:00Z');

CREATE TEMP TABLE b AS
SELECT d.days, w.*
FROM (VALUES (3, timestamptz '2027-09-01 00:20Z'), (8, timestamptz '2027-09-06 00:20Z')) AS d (days, until_at)
CROSS JOIN LATERAL tickq.simulation_window_breaks(d.until_at, '15 minutes', '2027-08-29 23:55Z') AS w;

SELECT is((SELECT b.shifts FROM b WHERE b.days = 3), ARRAY['1 day']::interval[],
    'a window of three days copies a day back, never a week');
SELECT ok((SELECT array_position(b.rows_shifts, '7 days') IS NULL FROM b WHERE b.days = 3),
    'and reads no break of a week''s shift');
SELECT is((SELECT b.shifts FROM b WHERE b.days = 8), ARRAY['1 day', '7 days']::interval[],
    'a window of eight days may copy a day or a week back');
SELECT ok((SELECT array_position(b.rows_shifts, '7 days') IS NOT NULL FROM b WHERE b.days = 8),
    'and reads the week''s breaks');
SELECT is(
    (SELECT array_agg(x.zone || x.first_at::text || x.back_to::text ORDER BY x.first_at, x.back_to)
        FROM b
        CROSS JOIN LATERAL unnest(b.rows_shifts, b.zones, b.firsts, b.backs) AS x (shift, zone, first_at, back_to)
        WHERE b.days = 3 AND x.shift = '1 day'),
    (SELECT array_agg(x.zone || x.first_at::text || x.back_to::text ORDER BY x.first_at, x.back_to)
        FROM tickq.simulation_breaks('2027-08-29 23:55Z', '2027-09-01 00:20Z', '1 day') AS x),
    'the three days'' breaks of a day''s shift are those of the day''s shift alone');

SELECT * FROM finish();
ROLLBACK;
