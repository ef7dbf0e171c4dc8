-- tickq.calendar_count counts a day whose zone keeps its offset around it by its wall times, and
-- only a day of a clock change slot by slot. It must answer exactly what the day-by-day walk of
-- every slot it replaced answered (kept below as pg_temp.walked_count):
-- cron strings (the OR rule, months, steps, lists), at + on calendars (nth and last weekdays,
-- days from the month's end), zones with clock changes of an hour, of half an hour
-- (Australia/Lord_Howe) and at 02:45 (Pacific/Chatham), spans starting and ending mid-day and
-- on a slot, across the changes, a year long, empty, backwards and reaching the 100,000 cap.
BEGIN;
SELECT plan(6);
-- A session in a zone with clock changes of its own: a day is not always 24 hours there.
SET LOCAL timezone = 'Europe/London';

CREATE FUNCTION pg_temp.walked_count(
    p_calendar tickq.calendar,
    p_since timestamptz,
    p_now timestamptz
) RETURNS integer
LANGUAGE plpgsql STABLE
AS $$
DECLARE
    v_day date := (p_since AT TIME ZONE p_calendar.timezone)::date - 1;
    v_last date := (p_now AT TIME ZONE p_calendar.timezone)::date + 1;
    v_count integer := 0;
BEGIN
    IF tickq.calendar_next(p_calendar, p_since) > p_now THEN
        RETURN 0;
    END IF;
    WHILE v_day <= v_last AND v_count < 100000 LOOP
        IF tickq.calendar_day(p_calendar, v_day) THEN
            v_count := v_count + (SELECT count(*)::integer FROM tickq.calendar_day_slots(p_calendar, v_day) AS s (slot)
                WHERE s.slot > p_since AND s.slot <= p_now);
        END IF;
        v_day := v_day + 1;
    END LOOP;
    RETURN least(v_count, 100000);
END
$$;

CREATE TEMP TABLE zones (zone) AS VALUES ('UTC'), ('Europe/London'), ('America/New_York'),
    ('Australia/Lord_Howe'), ('Pacific/Chatham');

CREATE TEMP TABLE calendars AS
SELECT c.what || ' in ' || z.zone AS what, tickq.cron_calendar(c.what, z.zone) AS calendar,
    c.what ~ '^(\*/15|7,37|3,18|15,45) ' AS dense
FROM zones AS z
CROSS JOIN (VALUES ('*/15 * * * *'), ('7,37 * * * *'), ('0 */2 * * *'), ('30 1 * * *'), ('30 2 * * *'),
    ('15 1,2 * * *'), ('15,45 2,3 * * *'), ('50 2 * * 0'), ('3,18,33,48 9-17 * * 1-5'), ('0 0 1,15 * 5'),
    ('0 6 * 3,10 0'), ('5 4 */3 * *'), ('0 0 29 2 *'), ('45 23 31 * *'), ('0 0 1 1 *')) AS c (what)
UNION ALL
SELECT a.what || ' in ' || z.zone,
    (a.times, NULL, NULL, a.weekdays, a.days, a.months, false, z.zone)::tickq.calendar, false
FROM zones AS z
CROSS JOIN (VALUES
    ('at 01:30, 02:15, 02:45 on Sundays', '{01:30,02:15,02:45}'::time[], '{7}'::smallint[], NULL::smallint[],
        NULL::smallint[]),
    ('at 00:00, 23:59 on the first and last day', '{00:00,23:59}', NULL, '{1,-1}', NULL),
    ('at 09:00 on the first Sunday and last Friday of March, October, November', '{09:00}', '{17,95}', NULL,
        '{3,10,11}'),
    ('at 02:00, 02:30, 03:00 and 02:30 again on weekdays', '{02:00,02:30,03:00,02:30}', '{1,2,3,4,5}', NULL,
        NULL)) AS a (what, times,
    weekdays, days, months);

CREATE TEMP TABLE spans (since, until) AS VALUES
    ('2027-02-24 09:17:00+00'::timestamptz, '2027-03-03 09:17:00+00'::timestamptz),  -- the capacity's week
    ('2027-02-24 09:17:00+00', '2028-02-23 09:17:00+00'),  -- and its 364 days
    ('2027-03-24 13:07:00+00', '2027-03-31 13:07:00+00'),  -- London's spring change
    ('2027-03-20 10:00:00+00', '2027-03-28 23:30:00+00'),  -- to the last hour of UTC's day of it
    ('2027-03-10 05:00:00+00', '2027-03-17 17:30:00+00'),  -- New York's
    ('2027-10-28 00:00:00+00', '2027-11-09 12:00:00+00'),  -- London's and New York's autumn change
    ('2027-03-30 15:45:00+00', '2027-04-08 03:00:00+00'),  -- Lord Howe's and Chatham's autumn change
    ('2027-09-20 11:11:00+00', '2027-10-06 22:22:00+00'),  -- Chatham's and Lord Howe's spring change
    ('2027-02-26 23:00:00+00', '2027-03-02 01:00:00+00'),  -- a month end's three days
    ('2027-05-31 23:00:00+00', '2027-06-11 23:00:00+00'),  -- London's midnights
    ('2027-06-01 07:37:00+00', '2027-06-30 08:37:00+00'),  -- from one slot to another
    ('2027-05-05 12:00:00+00', '2027-05-05 12:00:00+00'),  -- empty
    -- backwards:
    ('2027-05-05 12:00:00+00', '2027-05-01 12:00:00+00');

CREATE TEMP TABLE counted AS
SELECT c.what, s.since, s.until, tickq.calendar_count(c.calendar, s.since, s.until) AS counted,
    pg_temp.walked_count(c.calendar, s.since, s.until) AS walked
FROM calendars AS c CROSS JOIN spans AS s
-- the year of the calendars with dozens of slots a day walked in one zone with clock changes
WHERE NOT (c.dense AND s.until - s.since > interval '1 month' AND (c.calendar).timezone <> 'Europe/London');

SELECT is_empty($$SELECT * FROM counted AS c WHERE c.counted IS DISTINCT FROM c.walked$$,
    'every calendar over every span: the count the day-by-day walk gave');

SELECT is((SELECT count(*) FROM counted AS c WHERE c.walked > 0), 827::bigint,
    'and the spans hold slots (not only empty counts compared)');

-- A minutely cron string has a slot at every minute of real time, in any zone (none in a skipped
-- hour, twice as many in a repeated one): the minutes of the span, at most 100,000.
SELECT is_empty($$
    SELECT z.zone, s.minutes, c.counted
    FROM zones AS z
    CROSS JOIN (VALUES (99999), (100000), (100001), (525600)) AS s (minutes)
    CROSS JOIN LATERAL (SELECT tickq.calendar_count(tickq.cron_calendar('* * * * *', z.zone), '2027-03-01 10:30:00+00',
        '2027-03-01 10:30:00+00'::timestamptz + s.minutes * interval '1 minute') AS counted OFFSET 0) AS c
    WHERE c.counted <> least(s.minutes, 100000)
$$, 'a minutely cron over 99,999 minutes and more, across the clock changes: the minutes, up to '
    'the cap of 100,000');

-- Figures worked out by hand: 01:15 is skipped in London on 28 March 2027 and repeats on
-- 31 October; Lord Howe's clocks go back half an hour at 02:00 on 4 April, so 01:30-01:59 repeats.
SELECT is(tickq.calendar_count(tickq.cron_calendar('15 1,2 * * *', 'Europe/London'),
    '2027-03-24 13:07:00+00', '2027-03-31 13:07:00+00'), 13,
    'London''s spring week: two slots a day, one on the day 01:15 is skipped');
SELECT is(tickq.calendar_count(tickq.cron_calendar('15 1,2 * * *', 'Europe/London'),
    '2027-10-27 13:07:00+00', '2027-11-03 13:07:00+00'), 15,
    'its autumn week: three on the day 01:15 repeats');
SELECT is(tickq.calendar_count(tickq.cron_calendar('45 1,2 * * *', 'Australia/Lord_Howe'),
    '2027-03-30 15:45:00+00', '2027-04-08 03:00:00+00'), 17,
    'Lord Howe from 02:45 on 31 March to 13:30 on 8 April local: 01:45 and 02:45 on eight days, '
    '01:45 twice on the day it repeats');

SELECT * FROM finish();
ROLLBACK;
