-- Cron strings: five fields with lists, ranges, steps, names and @ forms, in the kind's zone;
-- Vixie's rule that a restricted day of the month OR a restricted weekday takes a day; single
-- minute and hour on the wall clock, the rest on real time; the refusals, naming the key.
BEGIN;
SELECT plan(30);

CREATE FUNCTION pg_temp.cron(p_cron text, p_zone text, p_from timestamptz, p_count integer) RETURNS timestamptz[]
LANGUAGE sql AS $$
    WITH RECURSIVE walk (n, slot) AS (
        SELECT 1, tickq.next_slot((NULL, NULL, NULL, NULL, NULL, NULL, p_cron, p_zone)::tickq.schedule, p_from)
        UNION ALL
        SELECT w.n + 1, tickq.next_slot((NULL, NULL, NULL, NULL, NULL, NULL, p_cron, p_zone)::tickq.schedule, w.slot)
        FROM walk AS w WHERE w.n < p_count
    )
    SELECT array_agg(w.slot ORDER BY w.n) FROM walk AS w
$$;

SELECT is(pg_temp.cron('0 6 1 * *', 'UTC', '2026-01-15Z', 2),
    ARRAY['2026-02-01 06:00Z', '2026-03-01 06:00Z']::timestamptz[], 'the 1st at 06:00');
SELECT is(pg_temp.cron('*/15 9-17 * * mon-fri', 'UTC', '2026-06-05 17:30Z', 3),
    ARRAY['2026-06-05 17:45Z', '2026-06-08 09:00Z', '2026-06-08 09:15Z']::timestamptz[],
    'steps, a range and weekday names: Friday evening to Monday morning');
SELECT is(pg_temp.cron('0 10-20/5 * * *', 'UTC', '2026-06-01Z', 4),
    ARRAY['2026-06-01 10:00Z', '2026-06-01 15:00Z', '2026-06-01 20:00Z', '2026-06-02 10:00Z']::timestamptz[],
    'a step over a range');
SELECT is(pg_temp.cron('30 4 1,15 jan,JUL *', 'UTC', '2026-01-02Z', 3),
    ARRAY['2026-01-15 04:30Z', '2026-07-01 04:30Z', '2026-07-15 04:30Z']::timestamptz[], 'month names, any case');
SELECT is(pg_temp.cron('0 0 13 * 5', 'UTC', '2026-02-01Z', 4),
    ARRAY['2026-02-06Z', '2026-02-13Z', '2026-02-20Z', '2026-02-27Z']::timestamptz[],
    'both day fields restricted: the 13th OR a Friday (Vixie)');
SELECT is(pg_temp.cron('0 0 */10 * mon', 'UTC', '2026-05-31Z', 2), ARRAY['2026-06-01Z', '2026-08-31Z']::timestamptz[],
    'a day field starting with * leaves the day to the other: AND, a Monday on the 1st, 11th, 21st or 31st');
SELECT is(pg_temp.cron('0 0 * * 0', 'UTC', '2026-06-01Z', 1), pg_temp.cron('0 0 * * 7', 'UTC', '2026-06-01Z', 1),
    'weekday 0 and 7 are both Sunday');
SELECT is(pg_temp.cron('0 0 29 2 *', 'UTC', '2026-01-01Z', 1), ARRAY['2028-02-29Z']::timestamptz[],
    'February 29 in cron');
SELECT is(pg_temp.cron('@hourly', 'UTC', '2026-06-01 10:20Z', 1), ARRAY['2026-06-01 11:00Z']::timestamptz[], '@hourly');
SELECT is(pg_temp.cron('@daily', 'UTC', '2026-06-01 10:20Z', 1), ARRAY['2026-06-02Z']::timestamptz[], '@daily');
SELECT is(pg_temp.cron('@weekly', 'UTC', '2026-06-01 10:20Z', 1), ARRAY['2026-06-07Z']::timestamptz[],
    '@weekly: Sunday midnight');
SELECT is(pg_temp.cron('@monthly', 'UTC', '2026-06-01 10:20Z', 1), ARRAY['2026-07-01Z']::timestamptz[], '@monthly');
SELECT is(pg_temp.cron('@yearly', 'UTC', '2026-06-01Z', 1), pg_temp.cron('@annually', 'UTC', '2026-06-01Z', 1),
    '@yearly and @annually');
SELECT is(pg_temp.cron('@annually', 'UTC', '2026-06-01Z', 1), ARRAY['2027-01-01Z']::timestamptz[], '@annually');

-- clock changes: single minute and hour follow the at rules; anything else real time
SELECT is(pg_temp.cron('30 2 * * *', 'America/New_York', '2026-03-08 05:00Z', 1),
    ARRAY['2026-03-08 07:30Z']::timestamptz[], '30 2 * * * in the spring gap runs one gap later, like at');
SELECT is(pg_temp.cron('30 1 * * *', 'America/New_York', '2026-11-01 04:00Z', 2),
    ARRAY['2026-11-01 06:30Z', '2026-11-02 06:30Z']::timestamptz[], '30 1 * * * on fall-back: once, the second 01:30');
SELECT is(pg_temp.cron('30 * * * *', 'America/New_York', '2026-11-01 04:00Z', 3),
    ARRAY['2026-11-01 04:30Z', '2026-11-01 05:30Z', '2026-11-01 06:30Z']::timestamptz[],
    '30 * * * * on fall-back: both 01:30s');
SELECT is(pg_temp.cron('30 * * * *', 'America/New_York', '2026-03-08 06:00Z', 2),
    ARRAY['2026-03-08 06:30Z', '2026-03-08 07:30Z']::timestamptz[], '30 * * * * on spring-forward: no 02:30');
SELECT is(tickq.slots_between((NULL, NULL, NULL, NULL, NULL, NULL, '*/5 * * * *', 'UTC')::tickq.schedule,
    '2026-06-01Z', '2026-06-01 01:00Z'),
    12, 'slots_between a cron string');
SELECT is(tickq.describe_schedule(
    (NULL, NULL, NULL, NULL, NULL, NULL, '*/15 9-17 * * mon-fri', 'UTC')::tickq.schedule),
    'cron "*/15 9-17 * * mon-fri": every 15 minutes in hours 9-17 on mon-fri UTC', 'describe_schedule in words');

-- refusals, naming the key
SELECT throws_ok($$SELECT tickq.sync_registry('{"kinds": {"x": {"command": ["x"], "cron": "61 * * * *",
    "timeout": 60}}}')$$,
    'TQ002', 'registry: kind "x", key "cron": minute field "61": 61 is not a minute (0-59)', 'minute 61 refused');
SELECT throws_ok($$SELECT tickq.sync_registry('{"kinds": {"x": {"command": ["x"], "cron": "0 0 6 * * *",
    "timeout": 60}}}')$$,
    'TQ002', 'registry: kind "x", key "cron": has 6 fields: tickq takes the five of a crontab (minute hour '
    'day-of-month month day-of-week), with no seconds or year field', 'six fields refused');
SELECT throws_ok($$SELECT tickq.sync_registry('{"kinds": {"x": {"command": ["x"], "cron": "@reboot",
    "timeout": 60}}}')$$,
    'TQ002', 'registry: kind "x", key "cron": @reboot runs once when cron starts, and tickq runs on a schedule '
    'only: give a schedule, or start the job with the system''s own boot service', '@reboot refused');
SELECT throws_ok($$SELECT tickq.sync_registry('{"kinds": {"x": {"command": ["x"], "cron": "@daily", "at": "06:00",
    "timeout": 60}}}')$$, 'TQ002', 'registry: kind "x", key "cron": give exactly one of "every", "at" or "cron"',
    'cron beside at refused');
SELECT is((SELECT array_agg(p.key || ': ' || p.problem) FROM tickq.registry_problems(
    '{"kinds": {"x": {"command": ["x"], "cron": "61 * * * *", "timeout": 60}}}') AS p),
    ARRAY['cron: minute field "61": 61 is not a minute (0-59)'], 'registry_problems names the key');
SELECT lives_ok($$SELECT tickq.sync_registry('{"kinds": {"c": {"command": ["x"], "cron": "0 6 * * MON-FRI",
    "timezone": "Europe/London", "timeout": 60}}}', p_now => '2026-06-01 00:00Z')$$, 'a cron kind syncs');

-- schedule_slots: what tickq next and tickq schedule print
SELECT results_eq($$SELECT s.at, s.local_at, s.timezone FROM tickq.schedule_slots(NULL, '{"cron": "0 6 * * 1-5",
    "timezone": "Europe/London"}', 'UTC', 2, '2026-06-05 12:00Z') AS s$$,
    $$VALUES ('2026-06-08 05:00Z'::timestamptz, '2026-06-08 06:00'::timestamp, 'Europe/London'::text),
        ('2026-06-09 05:00Z', '2026-06-09 06:00', 'Europe/London')$$, 'a cron string typed alone: its next slots');
SELECT throws_ok($$SELECT * FROM tickq.schedule_slots(NULL, '{"cron": "61 * * * *"}', 'UTC', 2)$$,
    '22023', 'cron: minute field "61": 61 is not a minute (0-59)', 'a bad string typed alone names the key only');
SELECT throws_ok($$SELECT * FROM tickq.schedule_slots('k', '{"cron": "61 * * * *"}', 'UTC', 2)$$,
    'TQ002', 'registry: kind "k", key "cron": minute field "61": 61 is not a minute (0-59)',
    'a kind''s names the kind');

SELECT is((SELECT array_agg(w.kind ORDER BY w.kind) FROM tickq.schedule_warnings('{"kinds": {
    "either": {"cron": "0 0 13 * 5"}, "dom": {"cron": "0 0 13 * *"}, "star": {"cron": "0 0 */2 * 5"},
    "bad": {"cron": "61 * * * *"}, "at": {"at": "06:00"}}}') AS w), ARRAY['either'],
    'check warns about a cron string with both day fields restricted, and only that');

SELECT * FROM finish();
ROLLBACK;
