-- The month ends tickq check simulates (a 28-, 29-, 30- and 31-day month, tickq.month_end_windows,
-- beside each zone's clock changes in tickq.simulation_windows) and the times --suggest spreads
-- a month-end pile-up over (tickq.spread_times).
BEGIN;
SELECT plan(10);

SELECT lives_ok($$SELECT * FROM tickq.sync_registry('{"settings": {"stale_after": 900},
    "kinds": {"close": {"command": ["x"], "at": "00:00", "days": [-1], "timeout": 60}}}', '2026-06-10 13:17Z')$$,
    'a last-day-of-the-month kind');
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

SELECT lives_ok($$SELECT * FROM tickq.sync_registry('{"settings": {"stale_after": 900},
    "kinds": {"close": {"command": ["x"], "at": "00:00", "days": [-1], "months": ["oct"], "timeout": 60},
        "tokyo": {"command": ["x"], "at": "00:00", "days": [1], "timezone": "Asia/Tokyo", "timeout": 60}}}',
    '2026-06-10 13:17Z')$$, 'a kind only in October, another in Tokyo');
SELECT results_eq($$SELECT month_end, starts_at, period FROM tickq.month_end_windows('2026-06-10 13:17Z')
    WHERE extract(DAY FROM month_end) = 31$$,
    $$VALUES ('2026-10-31'::date, '2026-10-29 15:00Z'::timestamptz, '3 days 9 hours'::interval)$$,
    'the 31-day month end with the most slots (October''s), from Tokyo''s midnight to the end of the 1st in UTC');
SELECT lives_ok($$SELECT * FROM tickq.sync_registry('{"settings": {"stale_after": 900},
    "kinds": {"daily": {"command": ["x"], "at": "00:00", "timeout": 60},
        "weekly": {"command": ["x"], "every": 604800, "timeout": 60}}}', '2026-06-10 13:17Z')$$,
    'a daily time and a weekly cadence');
SELECT is_empty($$SELECT * FROM tickq.month_end_windows('2026-06-10 13:17Z')$$,
    'no month ends when no kind knows the month');

-- A month-end pile-up spread over the night: each kind in turn at the least loaded tick.
SELECT lives_ok($$SELECT * FROM tickq.sync_registry('{"settings": {"stale_after": 900, "slots": 1,
        "housekeeping_every": 86400},
    "kinds": {"a": {"command": ["x"], "at": "00:00", "days": [-1], "timeout": 600},
        "b": {"command": ["x"], "at": "00:00", "days": [-1], "timeout": 600},
        "c": {"command": ["x"], "at": ["00:00", "12:00"], "days": [-1], "timeout": 600},
        "late": {"command": ["x"], "at": "23:57", "days": [-1], "timeout": 600},
        "cron": {"command": ["x"], "cron": "0 0 * * *", "timeout": 60}}}', '2026-06-10 13:17Z')$$,
    'three kinds at 00:00 on the last day, one at 23:57, a cron string at midnight');
SELECT results_eq($$SELECT kind, at_times FROM tickq.spread_times(NULL, '2026-06-10 13:17Z') ORDER BY kind$$,
    $$VALUES ('a', ARRAY['00:05']), ('b', ARRAY['00:15']), ('c', ARRAY['00:25', '12:25'])$$,
    'moved later in whole ticks past the cron string, the housekeeping and each other (each holds two ticks), '
    'all of a kind''s times together');
SELECT ok(NOT EXISTS (SELECT FROM tickq.spread_times(NULL, '2026-06-10 13:17Z') WHERE kind = 'late'),
    'a time is never moved past its day''s end (23:57 stays)');

SELECT * FROM finish();
ROLLBACK;
