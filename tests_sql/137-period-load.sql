-- The load the suggestions place moved kinds against has one owner, tickq.period_load: per tick
-- of the period, the weights of the runs holding it (tickq.period_ticks), as tickq.spread_offsets
-- and tickq.spread_times count it.
BEGIN;
SELECT plan(5);

SELECT tickq.sync_registry('{"settings": {"timezone": "UTC", "slots": 4}, "kinds": {
    "light": {"command": ["x"], "at": "00:02", "timeout": 120},
    "heavy": {"command": ["x"], "at": "00:03", "timeout": 60, "weight": 3},
    "cron": {"command": ["x"], "cron": "3 0 * * *", "timeout": 60}}}', '2026-06-01 00:00Z');

-- One hour of one-minute ticks from midnight: light holds ticks 2 and 3, heavy (weight 3) and
-- cron tick 3.
SELECT is(tickq.period_load(array(SELECT k FROM tickq.job_kind AS k WHERE k.name IN ('light', 'heavy', 'cron')),
    NULL, interval '1 minute', interval '1 hour', 60, '2026-06-01 00:00Z')::text,
    array_cat(ARRAY[0, 0, 1, 5], array_fill(0, ARRAY[56]))::text,
    'each tick carries the weights of the runs holding it; a tick held by none, 0');
SELECT is(cardinality(tickq.period_load(array(SELECT k FROM tickq.job_kind AS k WHERE k.name = 'light'),
    NULL, interval '1 minute', interval '1 hour', 60, '2026-06-01 00:00Z')), 60, 'one element per tick');
SELECT is(tickq.period_load(ARRAY[]::tickq.job_kind[], NULL, interval '1 minute', interval '1 hour', 3,
    '2026-06-01 00:00Z'), ARRAY[0, 0, 0], 'no kind: no load');
SELECT is((tickq.period_load(array(SELECT k FROM tickq.job_kind AS k WHERE k.name = 'light'),
    '{"light": 300}', interval '1 minute', interval '1 hour', 60, '2026-06-01 00:00Z'))[3:8], ARRAY[1, 1, 1, 1, 1, 0],
    'p_durations: a run holds its ticks for the seconds given, not its timeout');
SELECT is(tickq.period_load(array(SELECT k FROM tickq.job_kind AS k WHERE k.name = 'heavy'),
    NULL, interval '1 minute', interval '1 hour', 60, '2026-06-01 00:00Z'),
    (SELECT array_agg((SELECT count(*) FROM unnest(tickq.period_ticks(k, NULL, interval '1 minute', interval '1 hour',
        '2026-06-01 00:00Z')) AS c WHERE c = t)::integer * k.weight ORDER BY t)
     FROM tickq.job_kind AS k CROSS JOIN generate_series(0, 59) AS t WHERE k.name = 'heavy'),
    'the weight times the ticks period_ticks lists');

SELECT * FROM finish();
ROLLBACK;
