-- Precision: a slot between two ticks runs at the next tick (ticks on the clock when the tick
-- divides an hour); tick_lateness says how late, tick_on_time which tick keeps every slot on time,
-- and schedule_warnings (what `tickq check` prints) says both.
BEGIN;
SELECT plan(13);

CREATE FUNCTION pg_temp.registry(p_tick integer, p_kinds jsonb) RETURNS jsonb
LANGUAGE sql AS $$
    SELECT jsonb_build_object('settings', jsonb_build_object('tick', p_tick, 'timezone', 'Europe/London'),
        'kinds', p_kinds)
$$;

SELECT results_eq(
    $$SELECT l.kind, l.key, l.late_by, l.slot_time, l.runs_time, l.grain
      FROM tickq.tick_lateness(pg_temp.registry(300, '{
        "quarter": {"cron": "17 * * * *", "command": ["x"], "timeout": 60},
        "on_time": {"cron": "*/5 * * * *", "command": ["x"], "timeout": 60},
        "morning": {"at": ["06:17"], "on": ["mon"], "command": ["x"], "timeout": 60},
        "cadence": {"every": 300, "command": ["x"], "timeout": 60}}'), '2027-03-01 00:00Z') AS l$$,
    $$VALUES ('cadence', 'every', '0'::interval, NULL::time, NULL::time, 300),
        ('morning', 'at', '3 minutes', '06:17', '06:20', 60),
        ('on_time', 'cron', '0', NULL, NULL, 300),
        ('quarter', 'cron', '3 minutes', '00:17', '00:20', 60)$$,
    'a slot at minute 17 runs at the tick of minute 20 with tick = "5m"; those on the ticks are on time');

SELECT is(tickq.tick_on_time(pg_temp.registry(300, '{"a": {"at": ["06:17"], "command": ["x"], "timeout": 60},
    "b": {"cron": "*/5 * * * *", "command": ["x"], "timeout": 60}}'), '2027-03-01 00:00Z'),
    '1 minute'::interval, 'a minute-precise slot needs tick = "1m"');
SELECT is(tickq.tick_on_time(pg_temp.registry(300, '{"a": {"at": ["06:16"], "command": ["x"], "timeout": 60}}'),
    '2027-03-01 00:00Z'), '4 minutes'::interval, 'the largest tick that divides an hour and keeps 06:16: 4m');
SELECT is(tickq.tick_on_time(pg_temp.registry(300, '{"a": {"at": ["06:15"], "command": ["x"], "timeout": 60},
    "b": {"cron": "20,40 * * * *", "command": ["x"], "timeout": 60}}'), '2027-03-01 00:00Z'),
    '5 minutes'::interval, 'slots on the ticks keep the tick');
SELECT is(tickq.tick_on_time(pg_temp.registry(900, '{"a": {"cron": "0,10 * * * *", "command": ["x"], "timeout": 60},
    "b": {"at": ["07:30"], "command": ["x"], "timeout": 60}}'), '2027-03-01 00:00Z'),
    '10 minutes'::interval, 'the common tick of two kinds, never longer than the registry''s');
SELECT is(tickq.tick_on_time(pg_temp.registry(60, '{"a": {"every": 90, "command": ["x"], "timeout": 60}}'),
    '2027-03-01 00:00Z'), '45 seconds'::interval,
    'an every cadence of 90s: the largest divisor of 90s and an hour under a minute');
SELECT is(tickq.tick_on_time(pg_temp.registry(420, '{"a": {"at": ["06:17"], "command": ["x"], "timeout": 60}}'),
    '2027-03-01 00:00Z'), NULL, 'a tick that does not divide an hour falls on no clock: nothing to say');
SELECT is_empty($$SELECT * FROM tickq.tick_lateness(pg_temp.registry(420,
    '{"a": {"at": ["06:17"], "command": ["x"], "timeout": 60}}'), '2027-03-01 00:00Z')$$,
    '...and no kind is known late');

SELECT is((SELECT l.late_by FROM tickq.tick_lateness(pg_temp.registry(3600,
    '{"a": {"at": ["01:30"], "command": ["x"], "timeout": 60}}'), '2027-03-27 00:00Z') AS l),
    '30 minutes'::interval,
    'a time of day is read from the schedule: 01:30 is 30m off the hour, spring-forward day or not');
SELECT is((SELECT l.late_by FROM tickq.tick_lateness(jsonb_build_object('settings',
    '{"tick": 3600, "timezone": "Asia/Kolkata"}'::jsonb, 'kinds', '{"a": {"every": 3600, "command": ["x"],
    "timeout": 60}}'::jsonb), '2027-03-01 00:00Z') AS l), '30 minutes'::interval,
    'an hourly cadence is aligned to UTC: at +05:30 it runs at half past, 30m before the hour''s tick');
SELECT is_empty($$SELECT * FROM tickq.tick_lateness(pg_temp.registry(300,
    '{"bad": {"cron": "61 * * * *", "command": ["x"], "timeout": 60}}'), '2027-03-01 00:00Z')$$,
    'a schedule that does not read is registry_problems'' to refuse, not a precision warning');

SELECT is((SELECT w.warning FROM tickq.schedule_warnings(pg_temp.registry(300,
    '{"morning": {"at": ["06:17"], "command": ["x"], "timeout": 60}}'), '2027-03-01 00:00Z') AS w),
    'its slots fall between ticks: 06:17 (Europe/London) runs at 06:20, 3m late with tick = "5m"; '
    'tick = "1m" keeps every slot on time', 'check says how late, and the tick that keeps every slot on time');
SELECT is_empty($$SELECT * FROM tickq.schedule_warnings(pg_temp.registry(60,
    '{"morning": {"at": ["06:17"], "command": ["x"], "timeout": 60}}'), '2027-03-01 00:00Z')$$,
    'with tick = "1m" nothing to warn about');

SELECT * FROM finish();
ROLLBACK;
