-- The slots a run covers (job_run.slot_at, first_slot_at, slots_covered; the command's
-- TICKQ_SLOT, TICKQ_FIRST_SLOT, TICKQ_SLOTS): a merged late run, its retry, a manual run.
BEGIN;
SELECT plan(15);

SELECT is(tickq.last_slot(
    (NULL, NULL, ARRAY['00:00']::time[], NULL, ARRAY[-1]::smallint[], NULL, NULL, 'UTC')::tickq.schedule,
    '2026-01-15Z', '2026-04-10Z'), '2026-03-31 00:00Z'::timestamptz,
    'the latest last-day-of-the-month slot by now');
SELECT is(tickq.last_slot(
    (NULL, NULL, ARRAY['00:00']::time[], NULL, ARRAY[-1]::smallint[], NULL, NULL, 'UTC')::tickq.schedule,
    '2026-04-01Z', '2026-04-10Z'), '2026-04-01Z'::timestamptz, 'none since: the time it was due');
SELECT is(tickq.last_slot(('300 seconds', '60 seconds', NULL, NULL, NULL, NULL, NULL, 'UTC')::tickq.schedule,
    '2026-04-10 11:00Z', '2026-04-10 12:03Z'), '2026-04-10 12:01Z'::timestamptz, 'an every cadence, with its offset');
SELECT is(tickq.last_slot(('604800 seconds', NULL, NULL, NULL, NULL, NULL, NULL, 'UTC')::tickq.schedule,
    '2026-03-01Z', '2026-04-10 14:30Z'), '2026-04-09 00:00Z'::timestamptz, 'weekly: aligned to the epoch, a Thursday');
SELECT is((SELECT count(*)::integer FROM generate_series(1::bigint, 500) AS g (i)
    CROSS JOIN LATERAL (SELECT make_interval(secs => 1 + (g.i * 7919) % 90000) AS every,
        make_interval(secs => (g.i * 104729) % 600) AS gap,
        '2026-03-29 00:00Z'::timestamptz + make_interval(secs => (g.i * 15485863) % 500000) AS now) AS c
    CROSS JOIN LATERAL (SELECT least(c.gap, c.every - interval '1 second') AS offset_by) AS o
    WHERE tickq.last_slot((c.every, o.offset_by, NULL, NULL, NULL, NULL, NULL, 'UTC')::tickq.schedule,
        c.now - interval '30 days', c.now)
        IS DISTINCT FROM (SELECT max(t.at) FROM (
            SELECT tickq.next_slot((c.every, o.offset_by, NULL, NULL, NULL, NULL, NULL, 'UTC')::tickq.schedule,
                c.now - c.every - interval '1 microsecond') AS at
            UNION ALL
            SELECT tickq.next_slot((c.every, o.offset_by, NULL, NULL, NULL, NULL, NULL, 'UTC')::tickq.schedule,
                c.now - interval '1 microsecond')
        ) AS t WHERE t.at <= c.now)), 0,
    'the latest slot of an every cadence is the one next_slot gives, for 500 cadences and offsets');
SELECT is(tickq.last_slot((NULL, NULL, NULL, NULL, NULL, NULL, '30 * * * *', 'Europe/London')::tickq.schedule,
    '2026-10-24 12:00Z', '2026-10-25 01:45Z'), '2026-10-25 01:30Z'::timestamptz,
    'a cron string on real time: the second 01:30 of a fall-back night');

-- slots_between (tickq.calendar_count) answers most claims from the first slot after the due
-- time; counting the slots of every local day must give the same number wherever that slot falls.
SELECT is((SELECT count(*)::integer FROM (VALUES
        (ARRAY['01:30', '13:05']::time[], NULL::smallint[], NULL::smallint[], NULL::text, 'Europe/London'),
        (ARRAY['02:30']::time[], ARRAY[7]::smallint[], NULL, NULL, 'Europe/London'),
        (ARRAY['06:00']::time[], NULL, ARRAY[-1]::smallint[], NULL, 'America/New_York'),
        (NULL, NULL, NULL, '*/20 1-3 * * *', 'Europe/London')) AS c (at_times, on_days, days, cron, zone)
    CROSS JOIN generate_series(1::bigint, 400) AS g (i)
    CROSS JOIN LATERAL (SELECT '2026-03-27 00:00Z'::timestamptz + make_interval(secs => (g.i * 15485863) % 3000000)
        AS since) AS s
    CROSS JOIN LATERAL (SELECT s.since + make_interval(secs => (g.i * 7919) % (3 * 86400)) AS now) AS n
    CROSS JOIN LATERAL (SELECT (NULL, NULL, c.at_times, c.on_days, c.days, NULL, c.cron, c.zone)::tickq.schedule
        AS schedule) AS k
    CROSS JOIN LATERAL (SELECT tickq.calendar_of(k.schedule) AS calendar) AS l
    WHERE tickq.slots_between(k.schedule, s.since, n.now) IS DISTINCT FROM (
        SELECT count(*)::integer
        FROM generate_series((s.since AT TIME ZONE c.zone)::date - 1, (n.now AT TIME ZONE c.zone)::date + 1,
            interval '1 day') AS d (day)
        CROSS JOIN LATERAL tickq.calendar_day_slots(l.calendar, d.day::date) AS x (slot)
        WHERE tickq.calendar_day(l.calendar, d.day::date) AND x.slot > s.since AND x.slot <= n.now)), 0,
    'slots_between agrees with counting for 1,600 stretches of four calendars, over both clock changes');

-- a month-end kind synced
SELECT * FROM tickq.sync_registry('{
    "kinds": {"month_end": {"command": ["x"], "at": "06:00", "days": [-1], "timezone": "Europe/London",
        "timeout": 60, "retries": 1}}}', '2026-01-01Z');
UPDATE tickq.job_kind SET due_at = 'infinity' WHERE name = 'tickq.housekeeping';
UPDATE tickq.job_kind SET due_at = '2026-01-31 06:00Z' WHERE name = 'month_end';

SELECT results_eq($$SELECT run_trigger::text, slot_at, first_slot_at, slots_covered
    FROM tickq.claim_jobs(1, 'd1', '2026-04-10 12:00Z')$$,
    $$VALUES ('schedule', '2026-03-31 05:00Z'::timestamptz, '2026-01-31 06:00Z'::timestamptz, 3)$$,
    'asleep since January: three month ends merged, the latest 06:00 in summer time');
-- its first try fails
SELECT * FROM tickq.report_run((SELECT run_id FROM tickq.job_kind WHERE name = 'month_end'),
    'd1', 'failed', 1, NULL, NULL, '2026-04-10 12:01Z');
SELECT results_eq($$SELECT run_trigger::text, slot_at, first_slot_at, slots_covered
    FROM tickq.claim_jobs(1, 'd1', '2026-04-10 13:00Z')$$,
    $$VALUES ('retry', '2026-03-31 05:00Z'::timestamptz, '2026-01-31 06:00Z'::timestamptz, 3)$$,
    'the retry covers the slots of the run it retries');
SELECT * FROM tickq.report_run((SELECT run_id FROM tickq.job_kind WHERE name = 'month_end'),
    'd1', 'ok', 0, NULL, NULL, '2026-04-10 13:01Z');
SELECT results_eq($$SELECT run_trigger::text, slot_at, first_slot_at, slots_covered
    FROM tickq.claim_manual('month_end', 'me', NULL, '2026-04-10 14:00Z')$$,
    $$VALUES ('manual', NULL::timestamptz, NULL::timestamptz, 0)$$, 'a manual run covers no slot');
SELECT * FROM tickq.report_run((SELECT run_id FROM tickq.job_kind WHERE name = 'month_end'),
    'me', 'ok', 0, NULL, NULL, '2026-04-10 14:01Z');
SELECT results_eq($$SELECT run_trigger::text, slot_at, first_slot_at, slots_covered
    FROM tickq.claim_jobs(1, 'd1', '2026-04-30 05:02Z')$$,
    $$VALUES ('schedule', '2026-04-30 05:00Z'::timestamptz, '2026-04-30 05:00Z'::timestamptz, 1)$$,
    'claimed on time: the one slot it was due for');


-- first_run: "next_slot" makes a new kind wait for its first slot; "now" runs it at once.
-- kinds with first_run synced
SELECT * FROM tickq.sync_registry('{
    "kinds": {"month_end": {"command": ["x"], "at": "06:00", "days": [-1], "timezone": "Europe/London",
        "timeout": 60, "retries": 1},
        "weekly": {"command": ["x"], "every": 604800, "timeout": 60, "first_run": "next_slot"},
        "weekly_now": {"command": ["x"], "every": 604800, "timeout": 60, "first_run": "now"},
        "daily_now": {"command": ["x"], "at": "06:00", "timeout": 60, "first_run": "now"},
        "daily": {"command": ["x"], "at": "06:00", "timeout": 60, "first_run": "next_slot"}}}',
    '2026-04-10 14:30Z');
SELECT results_eq($$SELECT name, due_at FROM tickq.job_kind WHERE name IN ('weekly', 'weekly_now', 'daily',
    'daily_now') ORDER BY name$$,
    $$VALUES ('daily', '2026-04-11 06:00Z'::timestamptz), ('daily_now', '2026-04-10 14:30Z'::timestamptz),
        ('weekly', '2026-04-16 00:00Z'::timestamptz), ('weekly_now', '2026-04-10 14:30Z'::timestamptz)$$,
    'next_slot waits for the first slot, now runs at once, every cadence or calendar alike');
-- first_run changed on a kind already in the queue
SELECT * FROM tickq.sync_registry('{
    "kinds": {"month_end": {"command": ["x"], "at": "06:00", "days": [-1], "timezone": "Europe/London",
        "timeout": 60, "retries": 1},
        "weekly": {"command": ["x"], "every": 604800, "timeout": 60, "first_run": "now"},
        "weekly_now": {"command": ["x"], "every": 604800, "timeout": 60, "first_run": "now"},
        "daily_now": {"command": ["x"], "at": "06:00", "timeout": 60, "first_run": "now"},
        "daily": {"command": ["x"], "at": "06:00", "timeout": 60, "first_run": "next_slot"}}}',
    '2026-04-10 14:40Z');
SELECT is((SELECT due_at FROM tickq.job_kind WHERE name = 'weekly'), '2026-04-16 00:00Z'::timestamptz,
    'it is about the first sync only: a kind already synced keeps its due time');
SELECT is((SELECT array_agg(p.key || ': ' || p.problem ORDER BY p.key) FROM tickq.registry_problems(
    '{"kinds": {"x": {"command": ["x"], "every": 60, "first_run": "later", "timeout": 60}}}') AS p),
    ARRAY['first_run: must be "now" or "next_slot", got "later"'],
    'registry_problems refuses another first_run, naming the key');
SELECT throws_ok($$SELECT tickq.sync_registry('{"kinds": {"x": {"command": ["x"], "every": 60,
    "first_run": 1, "timeout": 60}}}')$$, 'TQ002', 'registry: kind "x", key "first_run": must be "now" or '
    '"next_slot", got 1', 'and so does a sync from JSON');

SELECT * FROM finish();
ROLLBACK;
