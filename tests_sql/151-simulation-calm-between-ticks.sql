-- Calm stretches (sql/api/18_simulation_calm.sql) where slots fall between ticks: with a tick of
-- a minute, kinds every 30 and every 45 seconds are claimed after their due time and a run
-- covers the slots since (its slots, slot_at, slots_covered: tickq.simulation_calm_write reads
-- the kind's schedule for those runs only); cron strings in a zone whose clocks go forward inside
-- the window (Europe/Berlin, 29 March 2026); three slots that run short at some ticks. The clock
-- part by part with the calm stretches gives the runs, the report and the state the real loop
-- gives, run for run.
BEGIN;
SELECT plan(7);

SELECT * FROM tickq.sync_registry('{
    "settings": {"slots": 3, "tick": 60, "stale_after": 900, "housekeeping_every": 86400},
    "kinds": {
        "a": {"command": ["x"], "every": 30, "timeout": 60, "priority": "high"},
        "b": {"command": ["x"], "every": 45, "timeout": 120},
        "c": {"command": ["x"], "cron": "*/2 * * * *", "timezone": "Europe/Berlin", "timeout": 180, "priority": "low"},
        "d": {"command": ["x"], "cron": "0,30 1-4 * * *", "timezone": "Europe/Berlin", "timeout": 300},
        "e": {"command": ["x"], "cron": "15 2 * * *", "timezone": "Europe/Berlin", "timeout": 60, "priority": "low"}
    }}', '2026-03-28 22:00Z');

CREATE TEMP TABLE runs AS SELECT true AS calm, r.* FROM tickq.job_run AS r WHERE false;
CREATE TEMP TABLE report AS SELECT true AS calm, r.* FROM tickq.simulation_report(now()) AS r WHERE false;
CREATE TEMP TABLE ends (calm boolean, state jsonb, first_id bigint);
CREATE TEMP TABLE handed (part_from timestamptz, part_until timestamptz, resumed timestamptz[]);

-- Six hours from 23:00 UTC (00:00 in Berlin, whose clocks go forward at 02:00), part by part,
-- each part with or without the calm path.
CREATE FUNCTION pg_temp.window_runs(p_calm boolean) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    v_part record;
    v_holds jsonb;
    v_first bigint;
BEGIN
    PERFORM tickq.simulation_start('2026-03-28 23:00Z');
    v_holds := tickq.simulation_holds(NULL);
    v_first := (SELECT m.first_id FROM tickq.simulation_mark('2026-03-28 23:00Z') AS m);
    FOR v_part IN SELECT * FROM tickq.simulation_parts('2026-03-29 04:59:59.999999Z', '2026-03-28 23:00Z') LOOP
        INSERT INTO handed SELECT v_part.part_from, v_part.part_until,
            tickq.simulation_clock(v_part.part_from, v_part.part_until, v_holds, p_calm)
        WHERE p_calm;
        PERFORM tickq.simulation_clock(v_part.part_from, v_part.part_until, v_holds, p_calm) WHERE NOT p_calm;
    END LOOP;
    INSERT INTO runs SELECT p_calm, r.* FROM tickq.job_run AS r WHERE r.dispatcher = 'simulator';
    UPDATE runs SET id = id - v_first WHERE calm = p_calm;  -- ids counted from the window's first
    INSERT INTO report SELECT p_calm, r.* FROM tickq.simulation_report('2026-03-29 04:59:59.999999Z', '2026-03-28 23:00Z') AS r;
    INSERT INTO ends SELECT p_calm, m.state, m.first_id - v_first FROM tickq.simulation_mark('2026-03-29 05:00Z') AS m;
END
$$;
SELECT pg_temp.window_runs(false);
SELECT pg_temp.window_runs(true);

SELECT ok((SELECT count(*) FROM runs WHERE NOT calm AND slots > 1) > 20,
    'the real loop made runs that cover more than one slot');
SELECT ok((SELECT bool_or(longest_wait > '0'::interval) FROM report WHERE NOT calm),
    'and the slots ran short: some kind waited');
SELECT ok(EXISTS (SELECT FROM handed WHERE resumed = '{}'), 'the calm path wrote whole parts');

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

SELECT * FROM finish();
ROLLBACK;
