-- The due times tickq.simulation_calm_runs gives (sql/api/18_simulation_calm.sql), held to the
-- rules they stand for, at the start of every part of six hours (as the clock reaches it):
-- a kind running at the part's start is next due at its schedule's next slot after its run ends
-- (tickq.next_slot, which the runs no longer call for it: they read its calendar once and ask
-- tickq.calendar_next, or next_slot for an every cadence); and no kind has more than one run after
-- the part (tickq.simulation_calm takes those runs as the kinds' due times when it writes the whole
-- part, without picking each kind's first). Slots between ticks (every 30 and 45 seconds with a
-- tick of a minute: runs that end inside a part and come again in it), cron strings in a zone
-- whose clocks go forward inside the window (Europe/Berlin, 29 March 2026), hours and days
-- filtered, three slots that run short at some ticks.
BEGIN;
SELECT plan(5);

SELECT * FROM tickq.sync_registry('{
    "settings": {"slots": 3, "tick": 60, "stale_after": 900, "housekeeping_every": 86400},
    "kinds": {
        "a": {"command": ["x"], "every": 30, "timeout": 60, "priority": "high"},
        "b": {"command": ["x"], "every": 45, "timeout": 120},
        "c": {"command": ["x"], "cron": "*/2 * * * *", "timezone": "Europe/Berlin", "timeout": 180, "priority": "low"},
        "d": {"command": ["x"], "cron": "28,58 1-4 * * *", "timezone": "Europe/Berlin", "timeout": 300},
        "e": {"command": ["x"], "cron": "14 2,3 * * 7", "timezone": "Europe/Berlin", "timeout": 120, "priority": "low"},
        "f": {"command": ["x"], "cron": "13,43 * * * *", "timeout": 240}
    }}', '2026-03-28 22:00Z');

CREATE TEMP TABLE seen (part_from timestamptz, kind text, running_until timestamptz, due timestamptz,
    next_slot timestamptz, after integer);

-- The clock part by part from p_from until p_until; at each part's start, before the clock moves
-- on, each kind's runs of the part as tickq.simulation_calm_runs gives them.
CREATE FUNCTION pg_temp.clock(p_from timestamptz, p_until timestamptz) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    v_part record;
    v_holds jsonb := tickq.simulation_holds(NULL);
BEGIN
    FOR v_part IN SELECT * FROM tickq.simulation_parts(p_until - interval '1 microsecond', p_from) LOOP
        INSERT INTO seen
        SELECT v_part.part_from, c.kind, r.claimed_at + (v_holds ->> r.kind)::interval,
            min(c.due_at) FILTER (WHERE c.claimed_at = c.first),
            tickq.next_slot(tickq.schedule_of(k), r.claimed_at + (v_holds ->> r.kind)::interval),
            count(*) FILTER (WHERE c.claimed_at > v_part.part_until)::integer
        FROM (SELECT c.*, min(c.claimed_at) OVER (PARTITION BY c.kind) AS first
            FROM tickq.simulation_calm_runs(v_part.part_from, v_part.part_until, v_holds) AS c) AS c
        JOIN tickq.job_kind AS k ON k.name = c.kind
        LEFT JOIN tickq.job_run AS r ON r.id = k.run_id
        GROUP BY c.kind, k.name, r.id;
        PERFORM tickq.simulation_clock(v_part.part_from, v_part.part_until, v_holds, true);
    END LOOP;
END
$$;
SELECT tickq.simulation_start('2026-03-28 23:00Z');
SELECT pg_temp.clock('2026-03-28 23:00Z', '2026-03-29 05:00Z');

SELECT ok((SELECT count(*) FROM seen WHERE running_until IS NOT NULL AND kind IN ('c', 'd', 'e', 'f')) > 20,
    'cron kinds were running at the start of many parts, their runs ending inside the part');
SELECT ok((SELECT count(*) FROM seen WHERE running_until IS NOT NULL AND kind IN ('a', 'b')) > 5,
    'and kinds of an every cadence');
SELECT is((SELECT count(*) FROM seen WHERE running_until IS NOT NULL AND due IS DISTINCT FROM next_slot), 0::bigint,
    'a kind running at a part''s start is next due at next_slot after its run''s end');
SELECT ok((SELECT count(*) FROM seen WHERE after = 1) > 50 AND EXISTS (SELECT FROM seen WHERE after = 0),
    'kinds have a run after the part (their due time after it) where their last run of the part ends in it');
SELECT is((SELECT count(*) FROM seen WHERE after > 1), 0::bigint,
    'no kind has more than one run after the part');

SELECT * FROM finish();
ROLLBACK;
