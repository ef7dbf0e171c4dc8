-- A schedule travels as one value: tickq.parse_schedule returns one, and tickq.with_schedule is
-- the one place that puts it in a kind's or an agent's row (the inverse of tickq.schedule_of),
-- for the registry's kinds, an agent's edits and an agent's kind alike.
BEGIN;
SELECT plan(8);

SELECT tickq.sync_registry('{"settings": {"timezone": "Europe/Paris"}, "kinds": {
    "cal": {"command": ["x"], "at": ["06:00", "18:30"], "on": ["mon", "last fri"], "days": [1, -1],
        "months": ["jan", "jul"], "timezone": "Asia/Tokyo", "timeout": 60, "catch_up": 1800},
    "cad": {"command": ["x"], "every": 5400, "offset": 30, "timeout": 60}}}', '2026-06-01 10:00Z');

SELECT is(pg_typeof(tickq.parse_schedule('x', '{"every": 60}', 'UTC'))::text, 'tickq.schedule',
    'the parser returns a schedule, not a row of a kind');

-- A kind's row given another kind's schedule: every schedule column follows (a NULL clears one),
-- every other column stays.
SELECT is(tickq.schedule_of(tickq.with_schedule(c, tickq.schedule_of(d))), tickq.schedule_of(d),
    'a calendar kind given an every cadence (90 minutes) with its offset holds it, the calendar cleared')
FROM tickq.job_kind AS c, tickq.job_kind AS d WHERE c.name = 'cal' AND d.name = 'cad';
SELECT is(tickq.schedule_of(tickq.with_schedule(d, tickq.schedule_of(c))), tickq.schedule_of(c),
    'an every kind given a calendar holds it, every and offset cleared')
FROM tickq.job_kind AS c, tickq.job_kind AS d WHERE c.name = 'cal' AND d.name = 'cad';
SELECT is(to_jsonb(tickq.with_schedule(c, tickq.schedule_of(d))) - ARRAY['every', 'every_offset', 'at_times',
        'on_days', 'days', 'months', 'cron', 'timezone'],
    to_jsonb(c) - ARRAY['every', 'every_offset', 'at_times', 'on_days', 'days', 'months', 'cron', 'timezone'],
    'the other columns of the kind (name, timeout, catch_up, due_at, ...) keep their values')
FROM tickq.job_kind AS c, tickq.job_kind AS d WHERE c.name = 'cal' AND d.name = 'cad';

-- An agent: the same schedule columns but no offset.
SELECT lives_ok($$SELECT tickq.save_agent('ag', '{"prompt": "p", "every": 3600}', true, '2026-06-01 10:00Z')$$,
    'an agent on an every cadence');
SELECT is(tickq.schedule_of(tickq.with_schedule(a, tickq.schedule_of(c))), tickq.schedule_of(c),
    'an agent given a calendar holds it, every cleared')
FROM tickq.agent AS a, tickq.job_kind AS c WHERE a.name = 'ag' AND c.name = 'cal';
SELECT is(tickq.with_schedule(a, tickq.parse_schedule('ag', '{"every": 3600, "offset": 300}', 'UTC')), a,
    'an agent given its every cadence with an offset: the offset has no column of the agent''s and is left out')
FROM tickq.agent AS a WHERE a.name = 'ag';

-- The kinds the parser fed: what the registry says, the catch_up beside the schedule kept.
SELECT results_eq($$SELECT k.at_times, k.on_days, k.days, k.months, k.timezone, k.catch_up, k.every
    FROM tickq.job_kind AS k WHERE k.name = 'cal'$$,
    $$VALUES ('{06:00,18:30}'::time[], '{1,95}'::smallint[], '{-1,1}'::smallint[], '{1,7}'::smallint[],
        'Asia/Tokyo'::text, '30 minutes'::interval, NULL::interval)$$,
    'a registry kind holds the parsed schedule and its catch_up');

SELECT * FROM finish();
ROLLBACK;
