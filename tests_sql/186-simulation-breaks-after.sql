-- The least first_at from each break on (firsts_after of tickq.simulation_window_breaks,
-- 19_simulation_window_start.sql), which tickq.simulation_breaks_until reads, taken as a running
-- minimum from the last break: for each shift, entry by entry in the order of last_at (then
-- the breaks' order), the least first_at of that break and every one after it, as read break by
-- break over a month of weekly, weekday, monthly and nightly kinds.
BEGIN;
SELECT plan(3);

SELECT * FROM tickq.sync_registry('{
    "settings": {"slots": 2, "tick": 60, "stale_after": 3600, "housekeeping_every": 86400},
    "kinds": {
        "weekly": {"command": ["x"], "cron": "10 3 * * tue", "timeout": 60},
        "weekdays": {"command": ["x"], "at": ["06:30", "18:00"], "on": ["mon", "fri"], "timeout": 60},
        "monthly": {"command": ["x"], "cron": "0 4 1,15 * *", "timeout": 60},
        "month_end": {"command": ["x"], "cron": "45 23 28-31 * *", "timeout": 60},
        "nightly": {"command": ["x"], "cron": "*/5 1 * * *", "timeout": 60},
        "five": {"command": ["x"], "every": 300, "timeout": 60}
    }}', '2026-06-01 00:00Z');

CREATE TEMP TABLE b AS
SELECT * FROM tickq.simulation_window_breaks('2026-07-03 00:00Z', '15 minutes', '2026-06-01 00:00Z');
-- Each break with its shift, first_at and the key firsts_after is sorted by.
CREATE TEMP TABLE x AS
SELECT x.shift, x.first_at, coalesce(x.last_at, '-infinity') AS slast, x.o
FROM b CROSS JOIN LATERAL unnest(b.rows_shifts, b.firsts, b.lasts) WITH ORDINALITY AS x (shift, first_at, last_at, o);

SELECT ok((SELECT count(*) FROM x WHERE x.shift = '1 day') > 20
    AND (SELECT count(*) FROM x WHERE x.shift = '7 days') > 5, 'the month has breaks for a day and for a week');
SELECT is((SELECT cardinality(b.firsts_after) FROM b), (SELECT count(*)::integer FROM x), 'an entry per break');
SELECT is((SELECT b.firsts_after FROM b),
    (SELECT array_agg(a.after ORDER BY a.shift, a.slast, a.o) FROM (
        SELECT e.shift, e.slast, e.o, min(l.first_at) AS after
        FROM x AS e
        INNER JOIN x AS l ON e.shift = l.shift AND (e.slast < l.slast OR e.slast = l.slast AND e.o <= l.o)
        GROUP BY e.shift, e.slast, e.o) AS a),
    'each the least first_at of its break and every one after it');

SELECT * FROM finish();
ROLLBACK;
