-- Weekday ranges in `on` ("mon-fri", and past sunday "fri-mon"): one rule, the parser's
-- (tickq.parse_days), for a registry kind and an agent alike (the CLI's --on passes its text
-- on); a range stands for each of its days, so a day in two entries is a repeat, refused.
BEGIN;
SELECT plan(12);

CREATE FUNCTION pg_temp.on_days(p_on jsonb) RETURNS smallint[]
LANGUAGE sql AS $$
    SELECT s.on_days FROM tickq.parse_schedule('x', jsonb_build_object('at', '06:00', 'on', p_on), 'UTC') AS s
$$;

SELECT is(pg_temp.on_days('["mon-fri"]'), '{1,2,3,4,5}'::smallint[], 'mon-fri is monday to friday');
SELECT is(pg_temp.on_days('["fri-mon"]'), '{1,5,6,7}'::smallint[], 'fri-mon wraps past sunday');
SELECT is(pg_temp.on_days('["sat-sun", "1st mon", "last fri"]'), '{6,7,11,95}'::smallint[],
    'a range beside nth and last weekdays');
SELECT is(pg_temp.on_days('["wed-wed"]'), '{3}'::smallint[], 'a range of one day is that day');
SELECT is(pg_temp.on_days('["mon-sun"]'), '{1,2,3,4,5,6,7}'::smallint[], 'mon-sun is every day');
SELECT throws_ok($$SELECT pg_temp.on_days('["mon-fri", "wed"]')$$, 'TQ002',
    'registry: kind "x", key "on": days must not repeat, got ["mon-fri", "wed"]',
    'a day in a range and again is a repeat');
SELECT throws_ok($$SELECT pg_temp.on_days('["mon-fry"]')$$, 'TQ002',
    'registry: kind "x", key "on": must be a list of weekdays (mon tue wed thu fri sat sun), ranges of them '
    '(mon-fri), nth weekdays (1st mon .. 5th sun) or last weekdays (last fri), got ["mon-fry"]',
    'a range of a day that is none is refused');
SELECT throws_ok($$SELECT pg_temp.on_days('["mon", "weekdays"]')$$, 'TQ002', NULL,
    'a word that is no day is refused beside a good one');
SELECT throws_ok($$SELECT pg_temp.on_days('["1st mon-fri"]')$$, 'TQ002', NULL,
    'an nth weekday is no range');

-- a kind from the registry and an agent: stored as days, said as a range, slots on those days
SELECT tickq.sync_registry('{"kinds": {"office": {"command": ["x"], "at": "06:00", "on": ["mon-fri"],
    "timezone": "UTC", "timeout": 60}}}', '2026-06-05 12:00Z');
SELECT is((SELECT tickq.describe_schedule(tickq.schedule_of(k)) FROM tickq.job_kind AS k WHERE k.name = 'office'),
    'at 06:00 on mon-fri UTC', 'a kind on mon-fri is described so');
SELECT is((SELECT k.due_at FROM tickq.job_kind AS k WHERE k.name = 'office'), '2026-06-08 06:00Z'::timestamptz,
    'from a friday noon, its next slot is monday''s');
SELECT tickq.save_agent('weekend', '{"prompt": "p", "at": "09:00", "on": ["sat-sun"], "timezone": "UTC"}', true);
SELECT is((SELECT a.on_days FROM tickq.agent AS a WHERE a.name = 'weekend'), '{6,7}'::smallint[],
    'an agent takes a range too');

SELECT * FROM finish();
ROLLBACK;
