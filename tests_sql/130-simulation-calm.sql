-- Calm stretches written without the claim and report loop (sql/api/18_simulation_calm.sql):
-- the clock part by part with the calm stretches gives the runs, the report and the state the
-- real loop gives (tickq.simulation_clock with p_calm false), run for run, on two registries.
-- The first: two slots that run short at some instants (a, c and d due at :00) and are calm in
-- between; the calm path wrote whole parts, the runs that found no free slot row waiting for the
-- first to come free (tickq.simulation_calm_walk), handed parts short at their start and where a
-- kind would skip slots for its catch_up to the real loop, and it stands aside where it cannot
-- show the same answer. The second: slots between ticks (with a
-- tick of a minute, kinds every 30 and every 45 seconds are claimed after their due time and a
-- run covers the slots since: its slots, slot_at, slots_covered, which tickq.simulation_calm_write
-- reads from the kind's schedule for those runs only); cron strings in a zone whose clocks go
-- forward inside the window (Europe/Berlin, 29 March 2026); three slots that run short at some
-- ticks.
BEGIN;
SELECT plan(24);

CREATE TEMP TABLE runs AS SELECT ''::text AS registry, true AS calm, r.* FROM tickq.job_run AS r WHERE false;
CREATE TEMP TABLE report AS
SELECT ''::text AS registry, true AS calm, r.* FROM tickq.simulation_report(now()) AS r WHERE false;
CREATE TEMP TABLE ends (registry text, calm boolean, state jsonb, first_id bigint);
CREATE TEMP TABLE handed (registry text, part_from timestamptz, part_until timestamptz, resumed timestamptz[]);

-- The window from p_from to p_until, part by part, each part with or without the calm path.
CREATE FUNCTION pg_temp.window_runs(p_registry text, p_from timestamptz, p_until timestamptz, p_calm boolean)
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    v_part record;
    v_holds jsonb;
    v_first bigint;
BEGIN
    PERFORM tickq.simulation_start(p_from);
    v_holds := tickq.simulation_holds(NULL);
    v_first := (SELECT m.first_id FROM tickq.simulation_mark(p_from) AS m);
    FOR v_part IN SELECT * FROM tickq.simulation_parts(p_until - interval '1 microsecond', p_from) LOOP
        INSERT INTO handed SELECT p_registry, v_part.part_from, v_part.part_until,
            tickq.simulation_clock(v_part.part_from, v_part.part_until, v_holds, p_calm)
        WHERE p_calm;
        PERFORM tickq.simulation_clock(v_part.part_from, v_part.part_until, v_holds, p_calm) WHERE NOT p_calm;
    END LOOP;
    INSERT INTO runs SELECT p_registry, p_calm, r.* FROM tickq.job_run AS r WHERE r.dispatcher = 'simulator';
    UPDATE runs SET id = id - v_first WHERE registry = p_registry AND calm = p_calm;  -- ids from the window's first
    INSERT INTO report
    SELECT p_registry, p_calm, r.* FROM tickq.simulation_report(p_until - interval '1 microsecond', p_from) AS r;
    INSERT INTO ends SELECT p_registry, p_calm, m.state, m.first_id - v_first FROM tickq.simulation_mark(p_until) AS m;
END
$$;

-- The calm path's runs, report and end state against the real loop's, for one registry.
CREATE FUNCTION pg_temp.the_same(p_registry text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
    v_runs text := 'SELECT kind, attempt, run_trigger, slots, claimed_at, started_at, finished_at, outcome, '
        'exit_code, output_tail, duration, due_at, slot_row, late_report_at, run_by, slot_at, first_slot_at, '
        'slots_covered, weight, pools FROM runs WHERE registry = %L AND %s calm ORDER BY claimed_at, kind';
    v_report text := 'SELECT kind, priority, runs, longest_wait, starved, worst_due_at, behind FROM report '
        'WHERE registry = %L AND %s calm ORDER BY kind';
BEGIN
    RETURN NEXT results_eq(format(v_runs, p_registry, ''), format(v_runs, p_registry, 'NOT'),
        p_registry || ': the same runs, column for column, slot rows too');
    RETURN NEXT results_eq(
        format('SELECT kind, claimed_at FROM runs WHERE registry = %L AND calm ORDER BY id', p_registry),
        format('SELECT kind, claimed_at FROM runs WHERE registry = %1$L AND NOT calm ORDER BY claimed_at, '
            '(SELECT min(o.id) FROM runs AS o WHERE o.registry = %1$L AND o.calm AND o.kind = runs.kind '
            'AND o.claimed_at = runs.claimed_at)', p_registry),
        p_registry || ': numbered in claim instant order, the same ids as far as the order within an instant allows');
    RETURN NEXT results_eq(format(v_report, p_registry, ''), format(v_report, p_registry, 'NOT'),
        p_registry || ': the same report');
    RETURN NEXT results_eq(
        format('SELECT state, first_id FROM ends WHERE registry = %L AND calm', p_registry),
        format('SELECT state, first_id FROM ends WHERE registry = %L AND NOT calm', p_registry),
        p_registry || ': the window ends in the same state, with as many ids taken');
END
$$;

-- Short at some instants: nine hours from 08:00.
SELECT * FROM tickq.sync_registry('{
    "settings": {"slots": 2, "tick": 60, "stale_after": 900, "housekeeping_every": 86400},
    "kinds": {
        "a": {"command": ["x"], "every": 600, "timeout": 120, "priority": "high"},
        "b": {"command": ["x"], "every": 900, "offset": 60, "timeout": 180},
        "c": {"command": ["x"], "cron": "0 * * * *", "timeout": 300, "priority": "low"},
        "d": {"command": ["x"], "cron": "0,30 9-11 * * *", "timeout": 1500, "priority": "low"},
        "e": {"command": ["x"], "cron": "5 */2 * * *", "timeout": 60, "catch_up": 1800}
    }}', '2026-06-01 07:00Z');
SELECT pg_temp.window_runs('short', '2026-06-01 08:00Z', '2026-06-01 17:00Z', false);
SELECT pg_temp.window_runs('short', '2026-06-01 08:00Z', '2026-06-01 17:00Z', true);

SELECT ok((SELECT count(*) FROM runs WHERE registry = 'short' AND NOT calm) > 100,
    'the real loop made the window''s runs');
SELECT ok((SELECT bool_or(longest_wait > '0'::interval) FROM report WHERE registry = 'short' AND NOT calm),
    'and the slots ran short: some kind waited');
SELECT ok(EXISTS (SELECT FROM handed WHERE registry = 'short' AND resumed = '{}'),
    'the calm path wrote whole parts');
SELECT ok(EXISTS (SELECT FROM handed AS h WHERE h.registry = 'short' AND h.resumed = '{}'
        AND EXISTS (SELECT FROM runs AS r WHERE r.registry = 'short' AND r.calm AND r.due_at >= h.part_from
            AND r.claimed_at > r.due_at AND r.claimed_at <= h.part_until)),
    'and wrote whole parts in which the slots ran short: runs due in the part waited for a slot row');
SELECT ok(EXISTS (SELECT FROM handed WHERE registry = 'short' AND resumed[2] = resumed[1] + interval '1 minute'
        AND resumed[3] = resumed[2] + interval '2 minutes'),
    'for one tick, and for twice as long each time the slots were still short when it handed back');
SELECT ok(EXISTS (SELECT FROM handed WHERE registry = 'short' AND resumed[1] = part_from),
    'and parts short at their start to it');
SELECT * FROM pg_temp.the_same('short');

-- Where it stands aside: a kind with a weight, or the setting off.
SELECT is(ARRAY[tickq.simulation_calm_allowed(tickq.simulation_holds(NULL)),
        (SELECT tickq.simulation_calm_allowed(tickq.simulation_holds(NULL))
            FROM set_config('tickq.simulator_calm', 'off', true))],
    ARRAY[true, false], 'allowed for this registry, not with tickq.simulator_calm off');

-- Slots between ticks: six hours from 23:00 UTC (00:00 in Berlin, whose clocks go forward at
-- 02:00).
SELECT * FROM tickq.sync_registry('{
    "settings": {"slots": 3, "tick": 60, "stale_after": 900, "housekeeping_every": 86400},
    "kinds": {
        "a": {"command": ["x"], "every": 30, "timeout": 60, "priority": "high"},
        "b": {"command": ["x"], "every": 45, "timeout": 120},
        "c": {"command": ["x"], "cron": "*/2 * * * *", "timezone": "Europe/Berlin", "timeout": 180, "priority": "low"},
        "d": {"command": ["x"], "cron": "0,30 1-4 * * *", "timezone": "Europe/Berlin", "timeout": 300},
        "e": {"command": ["x"], "cron": "15 2 * * *", "timezone": "Europe/Berlin", "timeout": 60, "priority": "low"}
    }}', '2026-03-28 22:00Z');
SELECT pg_temp.window_runs('between', '2026-03-28 23:00Z', '2026-03-29 05:00Z', false);
SELECT pg_temp.window_runs('between', '2026-03-28 23:00Z', '2026-03-29 05:00Z', true);

SELECT ok((SELECT count(*) FROM runs WHERE registry = 'between' AND NOT calm AND slots > 1) > 20,
    'the real loop made runs that cover more than one slot');
SELECT ok((SELECT bool_or(longest_wait > '0'::interval) FROM report WHERE registry = 'between' AND NOT calm),
    'and the slots ran short: some kind waited');
SELECT ok(EXISTS (SELECT FROM handed WHERE registry = 'between' AND resumed = '{}'),
    'the calm path wrote whole parts');
SELECT * FROM pg_temp.the_same('between');

-- Waits longer than stale_after: one slot, free at each quarter's start; h (high) holds it from
-- :02 to :06, l (low, due at :02 too) waits for it and m (normal) comes due at :05; at :06 l,
-- stale, goes before m. Three hours from 14:00.
SELECT * FROM tickq.sync_registry('{
    "settings": {"slots": 1, "tick": 60, "stale_after": 180, "housekeeping_every": 86400},
    "kinds": {
        "h": {"command": ["x"], "cron": "2,17,32,47 * * * *", "timeout": 240, "priority": "high"},
        "l": {"command": ["x"], "cron": "2,17,32,47 * * * *", "timeout": 60, "priority": "low"},
        "m": {"command": ["x"], "cron": "5,20,35,50 * * * *", "timeout": 60}
    }}', '2026-06-01 13:00Z');
SELECT pg_temp.window_runs('stale', '2026-06-01 14:00Z', '2026-06-01 17:00Z', false);
SELECT pg_temp.window_runs('stale', '2026-06-01 14:00Z', '2026-06-01 17:00Z', true);

SELECT ok(EXISTS (SELECT FROM runs AS l INNER JOIN runs AS m ON l.registry = m.registry AND l.calm = m.calm
        WHERE l.registry = 'stale' AND NOT l.calm AND l.kind = 'l' AND m.kind = 'm' AND l.claimed_at < m.claimed_at
            AND l.due_at <= l.claimed_at - interval '3 minutes' AND m.due_at > l.due_at AND m.due_at <= l.claimed_at
            AND m.due_at > l.claimed_at - interval '3 minutes'),
    'stale: in the real loop a kind waiting longer than stale_after went before one of a higher priority');
SELECT ok(EXISTS (SELECT FROM handed AS h WHERE h.registry = 'stale' AND h.resumed = '{}'
        AND EXISTS (SELECT FROM runs AS r WHERE r.registry = 'stale' AND r.calm AND r.due_at >= h.part_from
            AND r.claimed_at > r.due_at + interval '3 minutes' AND r.claimed_at <= h.part_until)),
    'stale: the calm path wrote whole parts in which runs waited longer than stale_after');
SELECT * FROM pg_temp.the_same('stale');

SELECT * FROM finish();
ROLLBACK;
