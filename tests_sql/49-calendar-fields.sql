-- Calendar fields: days of the month (negative from its end), months, nth and last weekdays,
-- combined with AND, with at times in a zone and today's daylight-saving rules; and the
-- registry's refusals, naming the key, from the file (registry_problems) and from JSON (sync).
BEGIN;
SELECT plan(28);

CREATE FUNCTION pg_temp.slots(p_on smallint[], p_days smallint[], p_months smallint[], p_zone text,
    p_from timestamptz, p_count integer, p_at time[] DEFAULT '{00:00}') RETURNS timestamptz[]
LANGUAGE sql AS $$
    WITH RECURSIVE walk (n, slot) AS (
        SELECT 1, tickq.next_slot((NULL, NULL, p_at, p_on, p_days, p_months, NULL, p_zone)::tickq.schedule, p_from)
        UNION ALL
        SELECT w.n + 1,
            tickq.next_slot((NULL, NULL, p_at, p_on, p_days, p_months, NULL, p_zone)::tickq.schedule, w.slot)
        FROM walk AS w WHERE w.n < p_count
    )
    SELECT array_agg(w.slot ORDER BY w.n) FROM walk AS w
$$;

-- days
SELECT is(pg_temp.slots(NULL, '{1,15}', NULL, 'UTC', '2026-01-10Z', 4),
    ARRAY['2026-01-15Z', '2026-02-01Z', '2026-02-15Z', '2026-03-01Z']::timestamptz[], 'days = [1, 15]');
SELECT is(pg_temp.slots(NULL, '{-1}', NULL, 'UTC', '2025-12-31Z', 12),
    ARRAY['2026-01-31Z', '2026-02-28Z', '2026-03-31Z', '2026-04-30Z', '2026-05-31Z', '2026-06-30Z',
        '2026-07-31Z', '2026-08-31Z', '2026-09-30Z', '2026-10-31Z', '2026-11-30Z', '2026-12-31Z']::timestamptz[],
    'days = [-1]: the last day of every month of a year');
SELECT is(pg_temp.slots(NULL, '{-1}', '{2}', 'UTC', '2027-03-01Z', 2),
    ARRAY['2028-02-29Z', '2029-02-28Z']::timestamptz[], 'the last day of February in a leap year and after');
SELECT is(pg_temp.slots(NULL, '{-2}', NULL, 'UTC', '2026-02-01Z', 2),
    ARRAY['2026-02-27Z', '2026-03-30Z']::timestamptz[], 'days = [-2]: the day before the last');
SELECT is(pg_temp.slots(NULL, '{29}', '{2}', 'UTC', '2025-01-01Z', 2),
    ARRAY['2028-02-29Z', '2032-02-29Z']::timestamptz[], 'February 29: leap years only');
SELECT is(pg_temp.slots(NULL, '{29}', '{2}', 'UTC', '2096-03-01Z', 1),
    ARRAY['2104-02-29Z']::timestamptz[], 'February 29: 2100 is no leap year');
SELECT is(pg_temp.slots(NULL, '{31}', NULL, 'UTC', '2026-03-31Z', 3),
    ARRAY['2026-05-31Z', '2026-07-31Z', '2026-08-31Z']::timestamptz[], 'a day a month lacks is no slot that month');
-- months
SELECT is(pg_temp.slots(NULL, '{1}', '{1,7}', 'UTC', '2026-01-02Z', 3),
    ARRAY['2026-07-01Z', '2027-01-01Z', '2027-07-01Z']::timestamptz[], 'days = [1], months = [jan, jul]');
SELECT is(pg_temp.slots(NULL, NULL, '{3}', 'UTC', '2026-03-30Z', 3),
    ARRAY['2026-03-31Z', '2027-03-01Z', '2027-03-02Z']::timestamptz[], 'months alone: every day of March');
-- nth and last weekdays
SELECT is(pg_temp.slots('{11}', NULL, NULL, 'UTC', '2026-05-31Z', 3),
    ARRAY['2026-06-01Z', '2026-07-06Z', '2026-08-03Z']::timestamptz[], '1st mon, June 2026 starting on a Monday');
SELECT is(pg_temp.slots('{95}', NULL, NULL, 'UTC', '2026-01-01Z', 3),
    ARRAY['2026-01-30Z', '2026-02-27Z', '2026-03-27Z']::timestamptz[], 'last fri');
SELECT is(pg_temp.slots('{1,95}', NULL, NULL, 'UTC', '2026-01-26Z', 3),
    ARRAY['2026-01-30Z', '2026-02-02Z', '2026-02-09Z']::timestamptz[], 'mon beside last fri: either');
SELECT is(pg_temp.slots('{55}', NULL, NULL, 'UTC', '2026-01-01Z', 2),
    ARRAY['2026-01-30Z', '2026-05-29Z']::timestamptz[], '5th fri: only months that have one');
-- AND
SELECT is(pg_temp.slots('{5}', '{13}', NULL, 'UTC', '2026-01-01Z', 2),
    ARRAY['2026-02-13Z', '2026-03-13Z']::timestamptz[], 'Friday the 13th: days AND on');
-- with at times in a zone, across a clock change
SELECT is(pg_temp.slots(NULL, '{-1}', '{3}', 'Europe/London', '2024-01-01Z', 1, '{01:30}'),
    ARRAY['2024-03-31 01:30Z']::timestamptz[], 'the last day of March 2024 at 01:30 London: in the gap, one gap later');
SELECT is(pg_temp.slots(NULL, '{-1}', NULL, 'America/New_York', '2026-01-01Z', 1, '{06:00,18:00}'),
    ARRAY['2026-01-31 11:00Z']::timestamptz[], 'last day at 06:00 New York');
SELECT is(tickq.slots_between((NULL, NULL, '{00:00}', NULL, '{-1}', NULL, NULL, 'UTC')::tickq.schedule,
    '2025-12-31Z', '2026-12-31Z'),
    12, 'slots_between counts last days');
SELECT is(tickq.describe_schedule(
    (NULL, NULL, '{06:00}', '{1,95}', '{1,15,-1}', '{1,7}', NULL, 'Europe/London')::tickq.schedule),
    'at 06:00 on mon,last fri on days 1,15,last in jan,jul Europe/London', 'describe_schedule says it in words');

-- the parser
SELECT results_eq($$SELECT s.at_times, s.on_days, s.days, s.months FROM tickq.parse_schedule('x',
    '{"at": "06:00", "on": ["1st mon", "last fri", "wed"], "days": [15, -1, 1], "months": ["jul", 1]}', 'UTC') AS s$$,
    $$VALUES ('{06:00}'::time[], '{3,11,95}'::smallint[], '{-1,1,15}'::smallint[], '{1,7}'::smallint[])$$,
    'on, days and months parsed: names and numbers');
SELECT throws_ok($$SELECT tickq.sync_registry('{"kinds": {"x": {"command": ["x"], "at": "06:00", "days": [0],
    "timeout": 60}}}')$$, 'TQ002',
    'registry: kind "x", key "days": must be a list of days of the month, 1 to 31 or -1 (the last day) to -31, got [0]',
    'days = [0] refused');
SELECT throws_ok($$SELECT tickq.sync_registry('{"kinds": {"x": {"command": ["x"], "at": "06:00", "days": [32],
    "timeout": 60}}}')$$, 'TQ002',
    'registry: kind "x", key "days": must be a list of days of the month, 1 to 31 or -1 (the last day) to -31, '
    'got [32]',
    'days = [32] refused');
SELECT throws_ok($$SELECT tickq.sync_registry('{"kinds": {"x": {"command": ["x"], "at": "06:00", "on": ["6th mon"],
    "timeout": 60}}}')$$, 'TQ002',
    'registry: kind "x", key "on": must be a list of weekdays (mon tue wed thu fri sat sun), ranges of them '
    '(mon-fri), nth weekdays (1st mon .. 5th sun) or last weekdays (last fri), got ["6th mon"]',
    'on = ["6th mon"] refused');
SELECT throws_ok($$SELECT tickq.sync_registry('{"kinds": {"x": {"command": ["x"], "at": "06:00", "months": ["jun", 13],
    "timeout": 60}}}')$$, 'TQ002',
    'registry: kind "x", key "months": must be a list of months, jan .. dec or 1 to 12, got ["jun", 13]',
    'months = [13] refused');
SELECT throws_ok($$SELECT tickq.sync_registry('{"kinds": {"x": {"command": ["x"], "at": "06:00", "days": [30, 31],
    "months": ["feb"], "timeout": 60}}}')$$, 'TQ002',
    'registry: kind "x", key "days": these days, weekdays and months name no date that exists '
    '(such as the 30th of February)',
    'February 30 and 31: no slot ever, refused');
SELECT throws_ok($$SELECT tickq.sync_registry('{"kinds": {"x": {"command": ["x"], "every": 60, "days": [1],
    "timeout": 60}}}')$$, 'TQ002', 'registry: kind "x", key "days": only a calendar schedule ("at") takes this key',
    'days with every refused');
SELECT is((SELECT array_agg(p.key || ': ' || p.problem ORDER BY p.key) FROM tickq.registry_problems(
    '{"kinds": {"x": {"command": ["x"], "at": "06:00", "days": [0], "timeout": 60}}}') AS p),
    ARRAY['days: must be a list of days of the month, 1 to 31 or -1 (the last day) to -31, got [0]'],
    'registry_problems names the key too');

SELECT lives_ok($$SELECT tickq.sync_registry('{"kinds": {"close": {"command": ["x"], "at": "00:00", "days": [-1],
    "timeout": 60}}}', p_now => '2026-04-10Z')$$, 'a kind on the last day syncs');
SELECT throws_ok($$UPDATE tickq.job_kind SET days = '{0}' WHERE name = 'close'$$, '23514', NULL,
    'the table refuses day 0 too');

SELECT * FROM finish();
ROLLBACK;
