-- How far a stretch of the simulator's clock comes again a day later
-- (tickq.simulation_repeats_until, by which tickq.simulation_repeat copies): every kind's slots
-- walked from the stretch's start and from a day later, side by side, to the first that differs.
BEGIN;
SELECT plan(10);

-- a cadence that divides a day and two times of day in UTC
SELECT * FROM tickq.sync_registry('{
    "settings": {"slots": 2, "tick": 300, "stale_after": 900, "housekeeping_every": 86400},
    "kinds": {
        "five": {"command": ["x"], "every": 300, "timeout": 60},
        "twice": {"command": ["x"], "at": ["01:00", "13:00"], "timeout": 60}
    }}', '2026-06-01 00:00Z');
SELECT is(tickq.simulation_repeats_until('2026-06-01 00:00Z', '2026-06-02 00:00Z', '1 day'),
    '2026-06-02 00:00Z'::timestamptz, 'their slots come again a day later: the whole stretch repeats');

-- and a weekly kind on Tuesdays
SELECT * FROM tickq.sync_registry('{
    "settings": {"slots": 2, "tick": 300, "stale_after": 900, "housekeeping_every": 86400},
    "kinds": {
        "five": {"command": ["x"], "every": 300, "timeout": 60},
        "twice": {"command": ["x"], "at": ["01:00", "13:00"], "timeout": 60},
        "weekly": {"command": ["x"], "at": ["03:10"], "on": ["tue"], "timeout": 60}
    }}', '2026-06-01 00:00Z');
SELECT is(tickq.simulation_repeats_until('2026-06-01 00:00Z', '2026-06-02 00:00Z', '1 day'),
    '2026-06-01 03:10Z'::timestamptz,
    'Monday repeats on Tuesday only until the weekly kind''s slot, which Monday does not have');
SELECT is(tickq.simulation_repeats_until('2026-06-02 04:00Z', '2026-06-03 04:00Z', '1 day'),
    '2026-06-03 04:00Z'::timestamptz,
    'Tuesday after that slot repeats on Wednesday: both wait for the same slot a week on');
SELECT is(tickq.simulation_repeats_until('2026-06-01 00:00Z', '2026-06-01 02:00Z', '1 day'),
    '2026-06-01 02:00Z'::timestamptz, 'never past the instant it is asked about');

SELECT tickq.pause_kind('twice', '2026-06-01 06:00Z', p_now => '2026-06-01 00:00Z');
SELECT is(tickq.simulation_repeats_until('2026-06-01 05:00Z', '2026-06-02 00:00Z', '1 day'), NULL,
    'nothing repeats while a kind is paused: the pause ends at an instant, not a day later');
SELECT is(tickq.simulation_repeats_until('2026-06-01 06:00Z', '2026-06-02 00:00Z', '1 day'),
    '2026-06-02 00:00Z'::timestamptz, 'from where the pause ended it does');

-- two times of day in UTC, 13 and 11 hours apart
SELECT * FROM tickq.sync_registry('{
    "settings": {"slots": 2, "tick": 300, "stale_after": 900, "housekeeping_every": 43200},
    "kinds": {
        "five": {"command": ["x"], "every": 300, "timeout": 60},
        "uneven": {"command": ["x"], "at": ["01:00", "14:00"], "timeout": 60}
    }}', '2026-06-01 00:00Z');
SELECT is(tickq.simulation_repeats_until('2026-06-01 00:00Z', '2026-06-01 12:00Z', '12 hours'),
    '2026-06-01 01:00Z'::timestamptz,
    'UTC times of day repeat every whole day, not every half day: 01:00 is not 14:00 less 12 hours');

-- every 55 minutes, which a day does not divide
SELECT * FROM tickq.sync_registry('{
    "settings": {"slots": 2, "tick": 300, "stale_after": 900, "housekeeping_every": 86400},
    "kinds": {
        "five": {"command": ["x"], "every": 300, "timeout": 60},
        "odd": {"command": ["x"], "every": 3300, "timeout": 60}
    }}', '2026-06-01 00:00Z');
SELECT is(tickq.simulation_repeats_until('2026-06-01 00:00Z', '2026-06-02 00:00Z', '1 day'),
    '2026-06-01 00:25Z'::timestamptz,
    'it only waits through both stretches: until its first slot of either (00:35, and 00:25 a day later)');

-- times of day in London, whose clocks go forward on 2027-03-28
SELECT * FROM tickq.sync_registry('{
    "settings": {"slots": 2, "tick": 300, "stale_after": 900, "housekeeping_every": 86400},
    "kinds": {
        "london": {"command": ["x"], "at": ["01:00", "09:00", "20:00"], "timezone": "Europe/London", "timeout": 60}
    }}', '2027-03-20 00:00Z');
SELECT is(tickq.simulation_repeats_until('2027-03-27 05:00Z', '2027-03-28 05:00Z', '1 day'),
    '2027-03-27 08:00Z'::timestamptz,
    'across the change Sunday''s 09:00 is 08:00 UTC, Saturday''s 09:00 UTC: the stretch ends before the first');
SELECT is(tickq.simulation_repeats_until('2027-03-29 05:00Z', '2027-03-30 05:00Z', '1 day'),
    '2027-03-30 05:00Z'::timestamptz, 'after it the days repeat again');

SELECT finish();
ROLLBACK;
