-- Where the breaks of the kinds' day rules end a stretch that repeats, searched in their sorted
-- arrays (tickq.simulation_breaks_until, 18_repeats.sql) instead of read whole as
-- tickq.simulation_repeats_until reads them: the same instant from every start, for a day and a
-- week, over a month of weekly, weekday, monthly and nightly kinds; and the same horizon for
-- tickq.simulation_repeats_until given it as its end. The sorted arrays are not used where a
-- calendar's zone changes its offset around the window.
BEGIN;
SELECT plan(9);

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
SELECT ok((SELECT sorted FROM b), 'a window of UTC calendars has its breaks sorted');
SELECT is((SELECT b.shifts FROM b), ARRAY[interval '1 day', interval '7 days'], 'for a day and a week');

-- Each start every 37 minutes from before the window to past it, and at each break's instants, for each shift:
-- the search and the pass over the shift's breaks (tickq.simulation_repeats_until's, every zone steady).
CREATE TEMP TABLE found AS
SELECT s.shift, p.at, tickq.simulation_breaks_until(p.at, r[1], r[cardinality(r)], b.sorted_backs, b.sorted_lasts,
        b.firsts_after) AS searched,
    (SELECT min(CASE WHEN x.back_to >= p.at THEN x.back_to ELSE greatest(x.first_at, p.at) END)
        FROM unnest(b.zones[r[1]:r[cardinality(r)]], b.firsts[r[1]:r[cardinality(r)]], b.lasts[r[1]:r[cardinality(r)]],
            b.backs[r[1]:r[cardinality(r)]]) AS x (zone, first_at, last_at, back_to)
        WHERE x.last_at >= p.at) AS read
FROM b
CROSS JOIN unnest(b.shifts) AS s (shift)
CROSS JOIN LATERAL (SELECT array_positions(b.rows_shifts, s.shift) AS r) AS r
CROSS JOIN (
    SELECT g.at FROM generate_series(timestamptz '2026-05-30 00:00Z', '2026-07-08 00:00Z', '37 minutes') AS g (at)
    UNION  -- and at each break's own instants, and a microsecond either side
    SELECT e.at + d.d FROM b AS bb
    CROSS JOIN unnest(bb.firsts || bb.lasts || bb.backs) AS e (at)
    CROSS JOIN unnest(ARRAY[interval '0', interval '1 microsecond', interval '-1 microsecond']) AS d (d)
    WHERE e.at IS NOT NULL) AS p;
SELECT is((SELECT count(*) FROM found WHERE searched IS DISTINCT FROM read), 0::bigint,
    'the search finds what the pass over every break finds, from every start');
SELECT cmp_ok((SELECT count(*) FROM found WHERE read > at AND read < at + shift), '>', 500::bigint,
    'many starts are bounded by a break within the shift');
SELECT cmp_ok((SELECT count(*) FROM found WHERE read = at), '>', 50::bigint,
    'some within a break''s differing slots (their first slot at or before the start)');
SELECT cmp_ok((SELECT count(*) FROM found AS f WHERE f.read > f.at AND NOT EXISTS (
        SELECT FROM b CROSS JOIN unnest(b.backs) AS k (back_to) WHERE k.back_to = f.read)), '>', 50::bigint,
    'some at a break''s first differing slot, not at the slot before its day');

-- The horizon of a stretch from each start every 3 hours, its end a shift later: given the search as its end, or
-- the breaks to read.
SELECT is((
    SELECT count(*) FROM b
    CROSS JOIN unnest(b.shifts) AS s (shift)
    CROSS JOIN LATERAL (SELECT array_positions(b.rows_shifts, s.shift) AS r) AS r
    CROSS JOIN generate_series(timestamptz '2026-06-01 00:00Z', '2026-06-24 00:00Z', '3 hours') AS p (at)
    WHERE tickq.simulation_repeats_until(p.at, least(p.at + s.shift, tickq.simulation_breaks_until(p.at, r[1],
            r[cardinality(r)], b.sorted_backs, b.sorted_lasts, b.firsts_after)), s.shift, '{}', '{}', '{}', '{}')
        IS DISTINCT FROM tickq.simulation_repeats_until(p.at, p.at + s.shift, s.shift, b.zones[r[1]:r[cardinality(r)]],
            b.firsts[r[1]:r[cardinality(r)]], b.lasts[r[1]:r[cardinality(r)]], b.backs[r[1]:r[cardinality(r)]])),
    0::bigint, 'tickq.simulation_repeats_until ends every stretch where it did reading the breaks');
SELECT is(tickq.simulation_breaks_until('2026-06-01 00:00Z', NULL, NULL, '{}', '{}', '{}'), NULL,
    'no breaks for a shift: nothing bounds a stretch');

-- a calendar in London, whose clocks go forward on 2027-03-28
SELECT * FROM tickq.sync_registry('{
    "settings": {"slots": 2, "tick": 60, "stale_after": 3600, "housekeeping_every": 86400},
    "kinds": {
        "weekly": {"command": ["x"], "cron": "10 3 * * tue", "timeout": 60},
        "london": {"command": ["x"], "at": ["09:00"], "timezone": "Europe/London", "timeout": 60}
    }}', '2027-03-01 00:00Z');
SELECT ok(NOT (SELECT w.sorted FROM tickq.simulation_window_breaks('2027-03-20 00:00Z', '15 minutes',
        '2027-03-02 00:00Z') AS w),
    'not sorted where a calendar''s zone changes its offset within a month of the window');

SELECT finish();
ROLLBACK;
