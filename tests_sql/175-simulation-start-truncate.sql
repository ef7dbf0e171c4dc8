-- tickq.simulation_start (sql/api/07_simulate.sql) lets go of an earlier window's runs. In a
-- scratch database, where they are all the runs there are and no foreign key names job_run
-- (tickq.db.scratch drops them), it empties job_run with TRUNCATE instead of deleting row by
-- row; elsewhere it deletes the simulator's runs only. The next window must go exactly as after
-- the delete (same runs, same report, the ids still past every run let go of), and a run of
-- another dispatcher must stay.
BEGIN;
SELECT plan(6);

-- one slot; a (hourly at :00) holds it 20 minutes, b (hourly at :10) 50 minutes: b waits
SELECT * FROM tickq.sync_registry('{
    "settings": {"slots": 1, "tick": 300, "stale_after": 900, "housekeeping_every": 86400},
    "kinds": {
        "a": {"command": ["x"], "every": 3600, "timeout": 1200},
        "b": {"command": ["x"], "every": 3600, "offset": 600, "timeout": 3000}
    }}', '2026-06-01 09:00Z');

CREATE TEMP TABLE went (how text, kind text, claimed_at timestamptz, finished_at timestamptz, outcome tickq.outcome,
    slot_row integer, id_from_first bigint);
CREATE TEMP TABLE reported (how text, report jsonb);
CREATE TEMP TABLE first_ids (how text, first_id bigint, last_before bigint);

-- Two windows in the same database, the second after simulation_start let go of the first's
-- runs; what the second made is kept as `how` went.
CREATE FUNCTION pg_temp.two_windows(p_how text) RETURNS void
LANGUAGE sql
AS $$
    SELECT tickq.simulation_start('2026-06-01 10:00Z');
    SELECT tickq.simulate_events('2026-06-01 13:59:59.999999Z', NULL, '2026-06-01 10:00Z');
    INSERT INTO first_ids (how, last_before) SELECT p_how, max(r.id) FROM tickq.job_run AS r;
    SELECT tickq.simulation_start('2026-06-02 10:00Z');
    SELECT tickq.simulate_events('2026-06-02 13:59:59.999999Z', NULL, '2026-06-02 10:00Z');
    UPDATE first_ids AS f SET first_id = (SELECT min(r.id) FROM tickq.job_run AS r WHERE r.dispatcher = 'simulator')
    WHERE f.how = p_how;
    INSERT INTO went
    SELECT p_how, r.kind, r.claimed_at, r.finished_at, r.outcome, r.slot_row,
        r.id - (SELECT min(o.id) FROM tickq.job_run AS o WHERE o.dispatcher = 'simulator')
    FROM tickq.job_run AS r WHERE r.dispatcher = 'simulator';
    INSERT INTO reported
    SELECT p_how, jsonb_agg(to_jsonb(s) ORDER BY s.kind)
    FROM tickq.simulation_report('2026-06-02 13:59:59.999999Z', '2026-06-02 10:00Z') AS s;
$$;

-- As in the queue's own database: the foreign keys of job_step and agent_turn name job_run.
SELECT pg_temp.two_windows('deleted');

-- As in a scratch database: no foreign key names job_run.
DO $$
DECLARE
    v_key record;
BEGIN
    FOR v_key IN
        SELECT c.conrelid::regclass AS relation, c.conname FROM pg_catalog.pg_constraint AS c
        WHERE c.confrelid = 'tickq.job_run'::regclass AND c.contype = 'f'
    LOOP
        EXECUTE format('ALTER TABLE %s DROP CONSTRAINT %I', v_key.relation, v_key.conname);
    END LOOP;
END
$$;
CREATE TEMP TABLE files AS SELECT pg_relation_filenode('tickq.job_run') AS before;
SELECT pg_temp.two_windows('emptied');

SELECT isnt((SELECT f.before FROM files AS f), pg_relation_filenode('tickq.job_run'),
    'with no foreign key naming job_run and only the simulator''s runs in it, job_run is emptied whole');
SELECT ok((SELECT count(*) > 4 FROM went AS w WHERE w.how = 'emptied')
        AND (SELECT r.report FROM reported AS r WHERE r.how = 'emptied') @> '[{"kind": "b"}]',
    'the second window ran (runs and a report to compare)');
SELECT set_eq($$SELECT w.kind, w.claimed_at, w.finished_at, w.outcome, w.slot_row, w.id_from_first FROM went AS w
        WHERE w.how = 'emptied'$$,
    $$SELECT w.kind, w.claimed_at, w.finished_at, w.outcome, w.slot_row, w.id_from_first FROM went AS w
        WHERE w.how = 'deleted'$$,
    'the second window makes the same runs as after the row-by-row delete');
SELECT is((SELECT r.report FROM reported AS r WHERE r.how = 'emptied'),
    (SELECT r.report FROM reported AS r WHERE r.how = 'deleted'), 'and reports the same');
SELECT ok((SELECT f.first_id > f.last_before FROM first_ids AS f WHERE f.how = 'emptied'),
    'the ids of the runs let go of are not taken again');

-- A run of another dispatcher in job_run: only the simulator's go.
INSERT INTO tickq.job_run (kind, attempt, run_trigger, dispatcher, claimed_at, finished_at, outcome)
VALUES ('a', 1, 'manual', 'host-1', '2026-05-31 10:00Z', '2026-05-31 10:05Z', 'ok');
SELECT tickq.simulation_start('2026-06-03 10:00Z');
SELECT results_eq($$SELECT r.dispatcher, r.claimed_at FROM tickq.job_run AS r$$,
    $$VALUES ('host-1', timestamptz '2026-05-31 10:00Z')$$,
    'a run of another dispatcher stays; the simulator''s go');

SELECT * FROM finish();
ROLLBACK;
