-- A schedule as one value (tickq.schedule): made from a kind's or an agent's row by
-- tickq.schedule_of, read whole by every schedule function, and still free for the claim and the
-- status table, which inline last_slot, slots_between and describe_schedule down to the kind's
-- own columns.
BEGIN;
SELECT plan(10);

CREATE FUNCTION pg_temp.plan_of(p_query text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    v_line text;
    v_plan text := '';
BEGIN
    FOR v_line IN EXECUTE 'EXPLAIN (VERBOSE, COSTS OFF) ' || p_query LOOP
        v_plan := v_plan || v_line || E'\n';
    END LOOP;
    RETURN v_plan;
END
$$;

SELECT * FROM tickq.sync_registry('{"kinds": {
    "hourly": {"command": ["x"], "every": 3600, "offset": 1200, "timeout": 60},
    "closing": {"command": ["x"], "at": ["06:00", "18:00"], "on": ["mon"], "days": [-1], "months": ["jan", "jul"],
        "timezone": "Europe/London", "timeout": 60},
    "office": {"command": ["x"], "cron": "*/15 9-17 * * mon-fri", "timezone": "America/New_York", "timeout": 60}}}',
    '2026-06-10 13:17Z');

SELECT results_eq(
    $$SELECT k.name, tickq.schedule_of(k) FROM tickq.job_kind AS k
      WHERE k.name IN ('hourly', 'closing', 'office') ORDER BY k.name$$,
    $$VALUES
        ('closing', (NULL, NULL, '{06:00,18:00}', '{1}', '{-1}', '{1,7}', NULL, 'Europe/London')::tickq.schedule),
        ('hourly', ('1 hour', '20 minutes', NULL, NULL, NULL, NULL, NULL, 'UTC')::tickq.schedule),
        ('office', (NULL, NULL, NULL, NULL, NULL, NULL, '*/15 9-17 * * mon-fri', 'America/New_York')::tickq.schedule)$$,
    'schedule_of: a kind''s eight schedule columns as one value'
);
SELECT is(
    (SELECT tickq.next_slot(tickq.schedule_of(k), '2026-06-10 13:17Z') FROM tickq.job_kind AS k
        WHERE k.name = 'office'),
    '2026-06-10 13:30Z'::timestamptz, 'next_slot reads the cron string and zone of the value'
);

SELECT tickq.save_agent('digest', '{"prompt": "p", "at": "07:30", "days": [1, 15], "timezone": "Asia/Tokyo"}', true,
    '2026-06-10 13:17Z');
SELECT is(
    (SELECT tickq.schedule_of(a) FROM tickq.agent AS a WHERE a.name = 'digest'),
    (NULL, NULL, '{07:30}', NULL, '{1,15}', NULL, NULL, 'Asia/Tokyo')::tickq.schedule,
    'schedule_of: an agent''s schedule columns, with no offset'
);
SELECT is(
    (SELECT a.schedule FROM tickq.agents_at() AS a WHERE a.name = 'digest'),
    'at 07:30 on days 1,15 Asia/Tokyo', 'an agent''s days of the month read in its schedule line'
);

-- explain_kind said what the status table says, days, months and cron strings included
SELECT is(
    tickq.explain_kind(n.name, '2026-06-10 13:17Z') ->> 'schedule',
    (SELECT s.schedule FROM tickq.queue_status_at('2026-06-10 13:17Z') AS s WHERE s.kind = n.name),
    format('tickq explain %s shows the whole schedule, as the status table does', n.name)
)
FROM (VALUES ('closing'), ('office')) AS n (name);
SELECT is(tickq.explain_kind('office', '2026-06-10 13:17Z') ->> 'schedule',
    'cron "*/15 9-17 * * mon-fri": every 15 minutes in hours 9-17 on mon-fri America/New_York',
    'a cron kind explained in words');

-- Inlined: the plans read the kind's columns, call none of last_slot, slots_between, schedule_of
-- and describe_schedule, and build no composite value of the row (an every cadence costs the
-- claim no function call).
SELECT doesnt_match(
    pg_temp.plan_of($$SELECT tickq.last_slot(tickq.schedule_of(k), k.due_at, '2026-06-10 13:17Z')
        FROM tickq.job_kind AS k$$),
    '(last_slot|schedule_of|k\.\*|::tickq\.schedule\M)',
    'last_slot of schedule_of(k) is one expression over the kind''s columns'
);
SELECT doesnt_match(
    pg_temp.plan_of($$SELECT tickq.slots_between(tickq.schedule_of(k), k.due_at, '2026-06-10 13:17Z')
        FROM tickq.job_kind AS k$$),
    '(slots_between|schedule_of|k\.\*|::tickq\.schedule\M)',
    'slots_between of schedule_of(k) is one expression over the kind''s columns'
);
SELECT doesnt_match(
    pg_temp.plan_of($$SELECT tickq.describe_schedule(tickq.schedule_of(k)) FROM tickq.job_kind AS k$$),
    '(describe_schedule|schedule_of|k\.\*|::tickq\.schedule\M)',
    'describe_schedule of schedule_of(k), as the status table asks it, is one expression over the columns'
);

SELECT * FROM finish();
ROLLBACK;
