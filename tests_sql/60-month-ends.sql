-- The month ends tickq check simulates (a 28-, 29-, 30- and 31-day month, tickq.month_end_windows,
-- beside each zone's clock changes in tickq.simulation_windows) and the times --suggest spreads
-- a month-end pile-up over (tickq.spread_times); agents on the calendar fields and cron strings
-- kinds take (the one parser, tickq.parse_schedule).
BEGIN;
SELECT plan(12);

-- a last-day-of-the-month kind
SELECT * FROM tickq.sync_registry('{"settings": {"stale_after": 900},
    "kinds": {"close": {"command": ["x"], "at": "00:00", "days": [-1], "timeout": 60}}}', '2026-06-10 13:17Z');
SELECT results_eq($$SELECT month_end, starts_at, period FROM tickq.month_end_windows('2026-06-10 13:17Z')
    ORDER BY month_end$$,
    $$VALUES ('2026-06-30'::date, '2026-06-29 00:00Z'::timestamptz, '3 days'::interval),
        ('2026-07-31', '2026-07-30 00:00Z', '3 days'), ('2027-02-28', '2027-02-27 00:00Z', '3 days'),
        ('2028-02-29', '2028-02-28 00:00Z', '3 days')$$,
    'the next month end of each length, a leap February four years ahead at most, from the day before to the 2nd');
SELECT results_eq($$SELECT month_end, starts_at, period, dst_zone FROM tickq.simulation_windows('2026-06-10 13:17Z')$$,
    $$VALUES (NULL::date, '2026-06-10 00:00Z'::timestamptz - interval '5 minutes', '31 days'::interval, NULL::text),
        ('2026-07-31', '2026-07-30 00:00Z'::timestamptz - interval '5 minutes', '3 days', NULL),
        ('2027-02-28', '2027-02-27 00:00Z'::timestamptz - interval '5 minutes', '3 days', NULL),
        ('2028-02-29', '2028-02-28 00:00Z'::timestamptz - interval '5 minutes', '3 days', NULL)$$,
    'beside the month from today (which holds June''s 30 days), the month ends no window holds');

-- a kind only in October, another in Tokyo
SELECT * FROM tickq.sync_registry('{"settings": {"stale_after": 900},
    "kinds": {"close": {"command": ["x"], "at": "00:00", "days": [-1], "months": ["oct"], "timeout": 60},
        "tokyo": {"command": ["x"], "at": "00:00", "days": [1], "timezone": "Asia/Tokyo", "timeout": 60}}}',
    '2026-06-10 13:17Z');
SELECT results_eq($$SELECT month_end, starts_at, period FROM tickq.month_end_windows('2026-06-10 13:17Z')
    WHERE extract(DAY FROM month_end) = 31$$,
    $$VALUES ('2026-10-31'::date, '2026-10-29 15:00Z'::timestamptz, '3 days 9 hours'::interval)$$,
    'the 31-day month end with the most slots (October''s), from Tokyo''s midnight to the end of the 1st in UTC');
-- a daily time and a weekly cadence
SELECT * FROM tickq.sync_registry('{"settings": {"stale_after": 900},
    "kinds": {"daily": {"command": ["x"], "at": "00:00", "timeout": 60},
        "weekly": {"command": ["x"], "every": 604800, "timeout": 60}}}', '2026-06-10 13:17Z');
SELECT is_empty($$SELECT * FROM tickq.month_end_windows('2026-06-10 13:17Z')$$,
    'no month ends when no kind knows the month');

-- A month-end pile-up spread over the night: each kind in turn at the least loaded tick.
-- three kinds at 00:00 on the last day, one at 23:57, a cron string at midnight
SELECT * FROM tickq.sync_registry('{"settings": {"stale_after": 900, "slots": 1,
        "housekeeping_every": 86400},
    "kinds": {"a": {"command": ["x"], "at": "00:00", "days": [-1], "timeout": 600},
        "b": {"command": ["x"], "at": "00:00", "days": [-1], "timeout": 600},
        "c": {"command": ["x"], "at": ["00:00", "12:00"], "days": [-1], "timeout": 600},
        "late": {"command": ["x"], "at": "23:57", "days": [-1], "timeout": 600},
        "cron": {"command": ["x"], "cron": "0 0 * * *", "timeout": 60}}}', '2026-06-10 13:17Z');
SELECT results_eq($$SELECT kind, at_times FROM tickq.spread_times(NULL, '2026-06-10 13:17Z') ORDER BY kind$$,
    $$VALUES ('a', ARRAY['00:05']), ('b', ARRAY['00:15']), ('c', ARRAY['00:25', '12:25'])$$,
    'moved later in whole ticks past the cron string, the housekeeping and each other (each holds two ticks), '
    'all of a kind''s times together');
SELECT ok(NOT EXISTS (SELECT FROM tickq.spread_times(NULL, '2026-06-10 13:17Z') WHERE kind = 'late'),
    'a time is never moved past its day''s end (23:57 stays)');

-- Agents: days, months, nth weekdays and cron, parsed as a kind's are.
-- a registry with [agents]
SELECT * FROM tickq.sync_registry('{"kinds": {"k": {"command": ["x"], "every": 300, "timeout": 60}},
    "agents": {"tools": []}}', '2026-06-10 13:17Z');
-- an agent on the last day of January and July
SELECT tickq.save_agent('close', '{"prompt": "p", "at": "07:00", "days": [-1],
    "months": ["jan", "jul"], "timezone": "Europe/London"}', true, '2026-06-10 13:17Z');
SELECT results_eq($$SELECT k.days, k.months, k.due_at FROM tickq.job_kind AS k WHERE k.name = 'agent.close'$$,
    $$VALUES ('{-1}'::smallint[], '{1,7}'::smallint[], '2026-07-31 06:00Z'::timestamptz)$$,
    'its kind carries them: due on 31 July at 07:00 in London');
-- an edit that names only its weekdays
SELECT tickq.save_agent('close', '{"on": ["last fri"]}', false, '2026-06-10 13:17Z');
SELECT results_eq($$SELECT a.on_days, a.days, a.months, a.timezone FROM tickq.agent AS a WHERE a.name = 'close'$$,
    $$VALUES ('{95}'::smallint[], '{-1}'::smallint[], '{1,7}'::smallint[], 'Europe/London')$$,
    'keeps its days, months and zone');
-- an agent on a cron string
SELECT tickq.save_agent('office', '{"prompt": "p", "cron": "*/15 9-17 * * mon-fri",
    "timezone": "America/New_York"}', true, '2026-06-10 13:17Z');
-- an edit of something else
SELECT tickq.save_agent('office', '{"max_turns": 2}', false, '2026-06-10 13:17Z');
SELECT results_eq($$SELECT a.cron, a.timezone, s.schedule FROM tickq.agent AS a
    JOIN tickq.agents_at() AS s ON s.name = a.name WHERE a.name = 'office'$$,
    $$VALUES ('*/15 9-17 * * mon-fri', 'America/New_York',
        'cron "*/15 9-17 * * mon-fri": every 15 minutes in hours 9-17 on mon-fri America/New_York')$$,
    'keeps its cron string and zone, described in words');
SELECT is((SELECT e.fields -> 'cron' FROM tickq.agents_export() AS e WHERE e.name = 'office'),
    '"*/15 9-17 * * mon-fri"'::jsonb, 'check and simulate load it with its cron string');
SELECT throws_ok($$SELECT tickq.save_agent('bad', '{"prompt": "p", "cron": "61 * * * *"}', true)$$, 'TQ040',
    NULL, 'a cron string out of range is refused');
SELECT throws_ok($$UPDATE tickq.agent SET days = '{0}' WHERE name = 'close'$$, 'TQ040',
    'agent ''close'': days: days takes days of the month 1 to 31 or -1 to -31 with an at schedule, got {0}',
    'and a day 0 written in psql, naming the field');

SELECT * FROM finish();
ROLLBACK;
