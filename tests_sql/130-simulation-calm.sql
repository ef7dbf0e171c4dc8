-- Calm stretches written without the claim and report loop (sql/api/18_simulation_calm.sql):
-- on a registry whose two slots run short at some instants (a, c and d due at :00) and are calm
-- in between, the clock part by part with the calm stretches gives the runs, the report and the
-- state the real loop gives (tickq.simulation_clock with p_calm false), run for run; the calm
-- path took over whole parts and handed back in the middle of others; and it stands aside where
-- it cannot show the same answer.
BEGIN;
SELECT plan(11);

SELECT * FROM tickq.sync_registry('{
    "settings": {"slots": 2, "tick": 60, "stale_after": 900, "housekeeping_every": 86400},
    "kinds": {
        "a": {"command": ["x"], "every": 600, "timeout": 120, "priority": "high"},
        "b": {"command": ["x"], "every": 900, "offset": 60, "timeout": 180},
        "c": {"command": ["x"], "cron": "0 * * * *", "timeout": 300, "priority": "low"},
        "d": {"command": ["x"], "cron": "0,30 9-11 * * *", "timeout": 1500, "priority": "low"},
        "e": {"command": ["x"], "cron": "5 */2 * * *", "timeout": 60, "catch_up": 1800}
    }}', '2026-06-01 07:00Z');

CREATE TEMP TABLE runs AS SELECT true AS calm, r.* FROM tickq.job_run AS r WHERE false;
CREATE TEMP TABLE report AS SELECT true AS calm, r.* FROM tickq.simulation_report(now()) AS r WHERE false;
CREATE TEMP TABLE ends (calm boolean, state jsonb, first_id bigint);
CREATE TEMP TABLE handed (part_from timestamptz, part_until timestamptz, resumed timestamptz[]);

-- Nine hours from 08:00, part by part, each part with or without the calm path.
CREATE FUNCTION pg_temp.window_runs(p_calm boolean) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    v_part record;
    v_holds jsonb;
    v_first bigint;
BEGIN
    PERFORM tickq.simulation_start('2026-06-01 08:00Z');
    v_holds := tickq.simulation_holds(NULL);
    v_first := (SELECT m.first_id FROM tickq.simulation_mark('2026-06-01 08:00Z') AS m);
    FOR v_part IN SELECT * FROM tickq.simulation_parts('2026-06-01 16:59:59.999999Z', '2026-06-01 08:00Z') LOOP
        INSERT INTO handed SELECT v_part.part_from, v_part.part_until,
            tickq.simulation_clock(v_part.part_from, v_part.part_until, v_holds, p_calm)
        WHERE p_calm;
        PERFORM tickq.simulation_clock(v_part.part_from, v_part.part_until, v_holds, p_calm) WHERE NOT p_calm;
    END LOOP;
    INSERT INTO runs SELECT p_calm, r.* FROM tickq.job_run AS r WHERE r.dispatcher = 'simulator';
    UPDATE runs SET id = id - v_first WHERE calm = p_calm;  -- ids counted from the window's first
    INSERT INTO report SELECT p_calm, r.* FROM tickq.simulation_report('2026-06-01 16:59:59.999999Z', '2026-06-01 08:00Z') AS r;
    INSERT INTO ends SELECT p_calm, m.state, m.first_id - v_first FROM tickq.simulation_mark('2026-06-01 17:00Z') AS m;
END
$$;
SELECT pg_temp.window_runs(false);
SELECT pg_temp.window_runs(true);

SELECT ok((SELECT count(*) FROM runs WHERE NOT calm) > 100, 'the real loop made the window''s runs');
SELECT ok((SELECT bool_or(longest_wait > '0'::interval) FROM report WHERE NOT calm),
    'and the slots ran short: some kind waited');
SELECT ok(EXISTS (SELECT FROM handed WHERE resumed = '{}'),
    'the calm path wrote whole parts');
SELECT ok(EXISTS (SELECT FROM handed WHERE resumed[1] > part_from AND resumed[1] + interval '5 minutes' <= part_until),
    'and handed parts to the real loop at the first instant the slots ran short, past their start');
SELECT ok(EXISTS (SELECT FROM handed WHERE resumed[2] = resumed[1] + interval '1 minute'
        AND resumed[3] = resumed[2] + interval '2 minutes'),
    'for one tick, and for twice as long each time the slots were still short when it handed back');
SELECT ok(EXISTS (SELECT FROM handed WHERE resumed[1] = part_from), 'and parts short at their start to it');

SELECT results_eq(
    $$SELECT kind, attempt, run_trigger, slots, claimed_at, started_at, finished_at, outcome, exit_code, output_tail,
        duration, due_at, slot_row, late_report_at, run_by, slot_at, first_slot_at, slots_covered, weight, pools
      FROM runs WHERE calm ORDER BY claimed_at, kind$$,
    $$SELECT kind, attempt, run_trigger, slots, claimed_at, started_at, finished_at, outcome, exit_code, output_tail,
        duration, due_at, slot_row, late_report_at, run_by, slot_at, first_slot_at, slots_covered, weight, pools
      FROM runs WHERE NOT calm ORDER BY claimed_at, kind$$,
    'the same runs, column for column, slot rows too');
SELECT results_eq(
    $$SELECT kind, claimed_at FROM runs WHERE calm ORDER BY id$$,
    $$SELECT kind, claimed_at FROM runs WHERE NOT calm ORDER BY claimed_at, (SELECT min(o.id) FROM runs AS o
        WHERE o.calm AND o.kind = runs.kind AND o.claimed_at = runs.claimed_at)$$,
    'numbered in claim instant order, the same ids as far as the order within an instant allows');
SELECT results_eq(
    $$SELECT kind, priority, runs, longest_wait, starved, worst_due_at, behind FROM report WHERE calm
      ORDER BY kind$$,
    $$SELECT kind, priority, runs, longest_wait, starved, worst_due_at, behind FROM report WHERE NOT calm
      ORDER BY kind$$,
    'the same report');
SELECT results_eq($$SELECT state, first_id FROM ends WHERE calm$$, $$SELECT state, first_id FROM ends WHERE NOT calm$$,
    'the window ends in the same state, with as many ids taken');

-- Where it stands aside: a kind with a weight, or the setting off.
SELECT is(ARRAY[tickq.simulation_calm_allowed(tickq.simulation_holds(NULL)),
        (SELECT tickq.simulation_calm_allowed(tickq.simulation_holds(NULL))
            FROM set_config('tickq.simulator_calm', 'off', true))],
    ARRAY[true, false], 'allowed for this registry, not with tickq.simulator_calm off');

SELECT * FROM finish();
ROLLBACK;
