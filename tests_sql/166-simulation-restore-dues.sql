-- A copy's kinds waiting for their next slot take the due times kept where the stretch copied
-- ended, a day later (tickq.simulation_dues, tickq.simulation_restore), instead of each asking
-- its schedule again: the same due times as the schedule gives, for cron strings, times of day and
-- cadences; not for a calendar with day rules (its next slot asked as before), a kind running
-- where the copy starts, or a state carried to a part it was not taken at.
BEGIN;
SELECT plan(8);

SELECT * FROM tickq.sync_registry('{
    "settings": {"slots": 3, "tick": 60, "stale_after": 3600, "housekeeping_every": 86400},
    "kinds": {
        "hourly": {"command": ["x"], "cron": "5 * * * *", "timeout": 600},
        "sevens": {"command": ["x"], "cron": "*/7 * * * *", "timeout": 120},
        "twice": {"command": ["x"], "at": ["06:00", "18:00"], "timeout": 600},
        "five": {"command": ["x"], "every": 300, "timeout": 60},
        "long": {"command": ["x"], "cron": "45 10 * * *", "timeout": 5400},
        "weekly": {"command": ["x"], "cron": "30 14 * * thu", "timeout": 60}
    }}', '2026-06-01 00:00Z');

CREATE TEMP TABLE mark AS SELECT now() AS at, m.* FROM tickq.simulation_mark(now()) AS m WHERE false;
CREATE FUNCTION pg_temp.clock(p_from timestamptz, p_until timestamptz) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    PERFORM tickq.simulation_clock(p.part_from, p.part_until, tickq.simulation_holds(NULL), true)
    FROM tickq.simulation_parts(p_until - interval '1 microsecond', p_from) AS p ORDER BY p.part_from;
    INSERT INTO mark SELECT p_until, m.* FROM tickq.simulation_mark(p_until) AS m;
END
$$;
SELECT tickq.simulation_start('2026-06-01 10:00Z');
SELECT pg_temp.clock('2026-06-01 10:00Z', '2026-06-01 12:00Z');
SELECT pg_temp.clock('2026-06-01 12:00Z', '2026-06-01 17:00Z');
SELECT pg_temp.clock('2026-06-01 17:00Z', '2026-06-02 12:00Z');

SELECT is((SELECT m.state FROM mark AS m WHERE m.at = '2026-06-02 12:00Z'),
    (SELECT m.state FROM mark AS m WHERE m.at = '2026-06-01 12:00Z'), 'at noon the state of the day before');
SELECT cmp_ok(tickq.simulation_repeats_until('2026-06-01 12:00Z', '2026-06-01 17:00Z', '1 day'), '>=',
    '2026-06-01 17:00Z'::timestamptz, 'and the afternoon until 17:00 repeats a day later');
SELECT ok((SELECT k.run_id IS NOT NULL FROM tickq.job_kind AS k WHERE k.name = 'long'),
    'long runs where the copy starts');
SELECT ok((SELECT k.due_at > '2026-06-02 17:00Z' FROM tickq.job_kind AS k WHERE k.name = 'weekly'),
    'weekly (Thursdays) waits past the copy');
CREATE TEMP TABLE waiting AS
SELECT k.name FROM tickq.job_kind AS k
WHERE k.run_id IS NULL AND k.due_at >= '2026-06-02 12:00Z' AND k.due_at < '2026-06-02 17:00Z'
    AND NOT tickq.simulation_day_rules(k);

-- The afternoon from 12:00 copied to where the clock stands, its end state kept with its due times.
SELECT tickq.simulation_copy('2026-06-01 12:00Z', '2026-06-01 17:00Z', '1 day', e.state || e.dues, f.ids, e.ids, n.ids,
    f.first_id, e.first_id, n.first_id)
FROM mark AS f, mark AS e, mark AS n
WHERE f.at = '2026-06-01 12:00Z' AND e.at = '2026-06-01 17:00Z' AND n.at = '2026-06-02 12:00Z';
SELECT is((SELECT array_agg(w.name ORDER BY w.name) FROM waiting AS w), ARRAY['five', 'hourly', 'sevens'],
    'three kinds take the due time kept a day before');
SELECT is((SELECT tickq.simulation_state('2026-06-02 17:00Z')), (SELECT m.state FROM mark AS m
    WHERE m.at = '2026-06-01 17:00Z'), 'the copy leaves the state of the day before at 17:00');
SELECT is_empty($$
    SELECT k.name, k.due_at FROM tickq.job_kind AS k
    WHERE k.enabled AND k.run_id IS NULL AND k.attempts = 0 AND k.due_at >= '2026-06-02 17:00Z'
    EXCEPT
    SELECT k.name, coalesce(tickq.next_slot(tickq.schedule_of(k), '2026-06-02 16:59:59.999999Z'),
        '2026-06-02 17:00Z'::timestamptz + interval '1 day') FROM tickq.job_kind AS k$$,
    'every kind waiting after the copy is due at its next slot, never a day after the copy''s end');

-- A state carried to a part it was not taken at keeps no due times for it.
SELECT is(tickq.simulation_dues_at((SELECT m.state || m.dues FROM mark AS m WHERE m.at = '2026-06-01 17:00Z'),
    '2026-06-01 17:15Z'), NULL, 'due times taken at 17:00 are not those of 17:15');

SELECT finish();
ROLLBACK;
