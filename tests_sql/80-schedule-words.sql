-- A schedule in words says what it does. "0 */3 * * *" runs eight times a day: it was described
-- "every 60 minutes in hours 0,3,6,..." (read as hourly); "every N minutes" is said only when
-- the runs are N minutes apart all day. The other descriptions stay as they were.
BEGIN;
SELECT plan(2);

SELECT results_eq(
    $$SELECT c.cron, tickq.describe_schedule((NULL, NULL, NULL, NULL, NULL, NULL, c.cron, 'UTC')::tickq.schedule)
      FROM (VALUES (1, '0 */3 * * *'), (2, '0 9,17 * * *'), (3, '0 */12 * * *'), (4, '0 8-18 * * 1-5'),
        (5, '0 * * * *'), (6, '*/15 * * * *'), (7, '0,30 * * * *'), (8, '*/30 9-17 * * 1-5'),
        (9, '15 */6 * * *'), (10, '*/7 * * * *'), (11, '* * * * *'), (12, '0 0 * * *'),
        (13, '30 6 * * 1-5'), (14, '0 0 1 1 *'), (15, '0 0 15 * 5'), (16, '5 4 * * sun'))
        AS c (n, cron) ORDER BY c.n$$,
    $$VALUES
        -- were "every 60 minutes in hours ...": runs hours apart, not hourly
        ('0 */3 * * *', 'cron "0 */3 * * *": at minute 0 in hours 0,3,6,9,12,15,18,21 UTC'),
        ('0 9,17 * * *', 'cron "0 9,17 * * *": at minute 0 in hours 9,17 UTC'),
        ('0 */12 * * *', 'cron "0 */12 * * *": at minute 0 in hours 0,12 UTC'),
        ('0 8-18 * * 1-5', 'cron "0 8-18 * * 1-5": at minute 0 in hours 8-18 on mon-fri UTC'),
        -- unchanged
        ('0 * * * *', 'cron "0 * * * *": every 60 minutes UTC'),
        ('*/15 * * * *', 'cron "*/15 * * * *": every 15 minutes UTC'),
        ('0,30 * * * *', 'cron "0,30 * * * *": every 30 minutes UTC'),
        ('*/30 9-17 * * 1-5', 'cron "*/30 9-17 * * 1-5": every 30 minutes in hours 9-17 on mon-fri UTC'),
        ('15 */6 * * *', 'cron "15 */6 * * *": at minute 15 in hours 0,6,12,18 UTC'),
        ('*/7 * * * *', 'cron "*/7 * * * *": at minute 0,7,14,21,28,35,42,49,56 UTC'),
        ('* * * * *', 'cron "* * * * *": every minute UTC'),
        ('0 0 * * *', 'cron "0 0 * * *": at 00:00 UTC'),
        ('30 6 * * 1-5', 'cron "30 6 * * 1-5": at 06:30 on mon-fri UTC'),
        ('0 0 1 1 *', 'cron "0 0 1 1 *": at 00:00 on days 1 in jan UTC'),
        ('0 0 15 * 5', 'cron "0 0 15 * 5": at 00:00 on fri or on days 15 UTC'),
        ('5 4 * * sun', 'cron "5 4 * * sun": at 04:05 on sun UTC')$$,
    'each cron string in words: what it runs, and the truthful ones as before');

SELECT results_eq(
    $$SELECT tickq.describe_schedule(
        (s.every, s.off, s.at_times, s.on_days, s.days, NULL, NULL, s.zone)::tickq.schedule)
      FROM (VALUES
        (1, interval '5 minutes', NULL::interval, NULL::time[], NULL::smallint[], NULL::smallint[], 'UTC'),
        (2, interval '1 hour', interval '20 minutes', NULL, NULL, NULL, 'UTC'),
        (3, NULL, NULL, ARRAY['06:00', '18:00']::time[], ARRAY[1]::smallint[], NULL, 'Europe/London'),
        (4, NULL, NULL, ARRAY['00:00']::time[], NULL, ARRAY[-1]::smallint[], 'UTC'))
        AS s (n, every, off, at_times, on_days, days, zone) ORDER BY s.n$$,
    $$VALUES ('every 5m'), ('every 1h offset 20m'), ('at 06:00,18:00 on mon Europe/London'),
        ('at 00:00 on days last UTC')$$,
    'every and at schedules in words as before');

SELECT * FROM finish();
