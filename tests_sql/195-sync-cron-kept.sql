-- A sync parses each cron string once (sql/api/00_cron_calendar.sql): its value rule, its
-- schedule and its next slot read the calendar tickq.cron_calendar keeps for the sync's
-- transaction (tickq.cron_kept), and the kinds are due where a parse for each read puts them.
BEGIN;
SELECT plan(5);

CREATE TEMP TABLE sent (doc jsonb);
INSERT INTO sent VALUES ('{"settings": {"slots": 2, "tick": 60},
    "kinds": {
        "a": {"command": ["x"], "cron": "7,37 * * * *", "timeout": 60},
        "b": {"command": ["x"], "cron": "5 4 * * 1", "timeout": 60},
        "c": {"command": ["x"], "cron": "15 3 * * *", "timeout": 60, "timezone": "Europe/Berlin"}
    }}');
SET LOCAL track_functions = 'pl';
SELECT is(current_setting('tickq.cron_kept', true), NULL, 'nothing is kept before a sync');
SELECT lives_ok($$SELECT * FROM tickq.sync_registry((SELECT doc FROM sent), '2026-06-01 10:25Z')$$,
    'a sync of three cron kinds');
-- a and b read in UTC; c in UTC by its value rule and in Berlin by its schedule.
SELECT is((SELECT sum(calls)::integer FROM pg_stat_xact_user_functions
        WHERE schemaname = 'tickq' AND funcname = 'cron_parse'), 4,
    'each string is parsed once for each zone it is read in');
SELECT is(current_setting('tickq.cron_kept', true), 'on', 'kept until the transaction ends');

-- The due times are those a parse for each read gives.
SELECT set_config('tickq.cron_kept', 'off', true);
SELECT is((SELECT array_agg(k.due_at ORDER BY k.name) FROM tickq.job_kind AS k WHERE k.name IN ('a', 'b', 'c')),
    (SELECT array_agg(tickq.next_slot(tickq.schedule_of(k), '2026-06-01 10:25Z') ORDER BY k.name)
        FROM tickq.job_kind AS k WHERE k.name IN ('a', 'b', 'c')),
    'the kinds are due at the slots an uncached read gives');

SELECT * FROM finish();
ROLLBACK;
