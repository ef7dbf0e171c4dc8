-- The worst case tickq check simulates: which windows cover a registry, the steady start, and
-- the daylight-saving rules the calendar arithmetic applies (docs/explanation/daylight-saving.md states them).
BEGIN;
SELECT plan(10);

-- UTC cadences only: one window from midnight UTC, opened the longest timeout early
-- an hourly registry
SELECT * FROM tickq.sync_registry('{
    "settings": {"stale_after": 900, "housekeeping_every": 900},
    "kinds": {"h": {"command": ["x"], "every": 3600, "offset": 1200, "timeout": 900}}}',
    '2026-06-10 13:17Z');
SELECT results_eq(
    $$SELECT starts_at, hours, period, warm_up, dst_zone FROM tickq.simulation_windows('2026-06-10 13:17Z')$$,
    $$VALUES ('2026-06-09 23:45Z'::timestamptz, 1.5::numeric, '1 hour'::interval, '15 minutes'::interval, NULL::text)$$,
    'one window: the hour, opened 15m (the longest timeout) early and closed 15m (stale_after) late');

-- cadences that meet only every 77 minutes
-- cadences of 7 and 11 minutes
SELECT * FROM tickq.sync_registry('{
    "settings": {"stale_after": 900, "housekeeping_every": 660},
    "kinds": {"a": {"command": ["x"], "every": 420, "timeout": 60}}}', '2026-06-10 13:17Z');
SELECT is((SELECT period FROM tickq.simulation_windows('2026-06-10 13:17Z')), '77 minutes'::interval,
    'the window covers their least common multiple');

-- a weekly calendar kind in London: a week that holds London's next clock change
-- weekly in London, daily in Paris
SELECT * FROM tickq.sync_registry('{
    "settings": {"stale_after": 900, "housekeeping_every": 900},
    "kinds": {"w": {"command": ["x"], "at": "02:30", "on": ["sun"], "timezone": "Europe/London", "timeout": 1500},
              "p": {"command": ["x"], "at": "02:30", "timezone": "Europe/Paris", "timeout": 60}}}',
    '2026-06-10 13:17Z');
SELECT results_eq($$SELECT starts_at, period, dst_zone FROM tickq.simulation_windows('2026-06-10 13:17Z')$$,
    $$VALUES ('2026-10-24 23:00Z'::timestamptz - interval '25 minutes', '7 days'::interval, 'Europe/London'),
        ('2027-03-28 00:00Z'::timestamptz - interval '25 minutes', '2 days'::interval, 'Europe/London')$$,
    'a week from local midnight of 25 October (London and Paris change at the same instant: one window), '
    'and the change after it, in March, for two days');

-- zones that change clocks weeks apart get a window each
-- daily in London and Sydney
SELECT * FROM tickq.sync_registry('{
    "settings": {"stale_after": 900, "housekeeping_every": 900},
    "kinds": {"w": {"command": ["x"], "at": "02:30", "timezone": "Europe/London", "timeout": 60},
              "s": {"command": ["x"], "at": "02:30", "timezone": "Australia/Sydney", "timeout": 60}}}',
    '2026-06-10 13:17Z');
SELECT results_eq($$SELECT starts_at, dst_zone FROM tickq.simulation_windows('2026-06-10 13:17Z')$$,
    $$VALUES ('2026-10-03 14:00Z'::timestamptz - interval '5 minutes', 'Australia/Sydney'),
             ('2026-10-24 23:00Z'::timestamptz - interval '5 minutes', 'Europe/London'),
             ('2027-03-28 00:00Z'::timestamptz - interval '5 minutes', 'Europe/London'),
             ('2027-04-03 13:00Z'::timestamptz - interval '5 minutes', 'Australia/Sydney')$$,
    'Sydney (4 October) and London (25 October): a window each, from the change day''s local midnight, '
    'opened a whole tick early for a 1-minute timeout; and each one''s change after that (spring, fall)');

-- the steady start: each kind at its first slot at or after the window's start, nothing running
-- a steady start
SELECT tickq.simulation_start('2026-06-10 02:30Z');
SELECT results_eq($$SELECT name, due_at FROM tickq.job_kind WHERE enabled ORDER BY name$$,
    $$VALUES ('s', '2026-06-10 16:30Z'::timestamptz), ('tickq.housekeeping', '2026-06-10 02:30Z'),
             ('w', '2026-06-11 01:30Z')$$,
    'every kind waits for its own next slot (a slot exactly at the start is due at the start)');

-- Daylight saving, as next_slot computes it in the database's own time-zone data:
SELECT is(tickq.next_slot((NULL, NULL, '{02:30}', NULL, NULL, NULL, NULL, 'America/New_York')::tickq.schedule,
    '2026-03-08 04:00Z'),
    '2026-03-08 07:30Z'::timestamptz, 'a wall time in a spring-forward gap runs one gap later (03:30 EDT)');
SELECT is(tickq.next_slot((NULL, NULL, '{01:30}', NULL, NULL, NULL, NULL, 'America/New_York')::tickq.schedule,
    '2026-11-01 04:00Z'),
    '2026-11-01 06:30Z'::timestamptz, 'an ambiguous fall-back time runs at its second occurrence (01:30 EST)');
SELECT is(tickq.next_slot((NULL, NULL, '{01:30}', NULL, NULL, NULL, NULL, 'America/New_York')::tickq.schedule,
    '2026-11-01 06:30Z'),
    '2026-11-02 06:30Z'::timestamptz, '...and only then: the next slot is the next day');
SELECT is(tickq.next_slot((NULL, NULL, '{02:30,03:30}', NULL, NULL, NULL, NULL, 'America/New_York')::tickq.schedule,
    '2026-03-08 04:00Z'),
    '2026-03-08 07:30Z'::timestamptz, 'two at-times that land on the same instant (02:30 in the gap, 03:30)...');
SELECT is(tickq.next_slot((NULL, NULL, '{02:30,03:30}', NULL, NULL, NULL, NULL, 'America/New_York')::tickq.schedule,
    '2026-03-08 07:30Z'),
    '2026-03-09 06:30Z'::timestamptz, '...run once: the next slot is the next day''s 02:30');

SELECT * FROM finish();
ROLLBACK;
