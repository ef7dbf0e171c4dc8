-- For the scratch template only (tickq.db.scratch), after the migration: what a queue needs and
-- a database only the role that built it ever uses, for a simulation, does not. Each cost the
-- simulator's claims and reports time (bench/README.md).
-- * The API's functions run as their caller (SECURITY INVOKER), not as their owner with a
--   pinned search_path: here the caller is their owner, and a scratch session pins the same
--   search_path itself (tickq.db.scratch.SESSION_SETTINGS). Each call of a function that sets
--   search_path saves, sets and restores it, and every claim and report makes several.
-- * job_run's foreign key to job_kind, checked for every run a claim opens and every report of
--   it: the simulator never renames or deletes a kind.
-- * The foreign keys to job_run of job_step and agent_turn (ON DELETE CASCADE), each a query
--   for every run tickq.simulation_start deletes (the window before's, in a database that
--   simulates several): the simulator writes neither table. 74,000 runs of a month end of 1,000
--   cron kinds took 0.65 s to delete with them, 0.1 s without (bench/README.md).
-- * job_run's indexes other than its primary key (the history by kind, by success, by finish):
--   the simulation finds runs by id and its report by claim time, never through them, and every
--   report changes columns they hold, so none of its updates could be HOT (each wrote a new
--   entry in all four indexes); without them each is.
-- * job_kind's claim indexes (job_kind_claimable, job_kind_catch_up), both on due_at, which
--   every claim and report and every kind a calm stretch writes changes: with them none of those
--   updates could be HOT (each wrote a new entry in three indexes of job_kind). Without them the
--   claim reads its candidates from the table's thousand-odd rows instead of index ranges, in
--   the same order (it orders by a unique key): 3.5 s less CPU of the month of 1,000 cron kinds
--   (bench/README.md).
-- * The CHECK constraints of job_kind, job_run and pool_slot, which every claim and report
--   writes: PostgreSQL reads each from its stored text again for every statement that writes
--   the table (about a twentieth of a simulation's time), and the simulation writes only what
--   the queue's own functions write.
-- * The metrics' counters (tickq.run_count, kept by job_run's triggers run_counted and
--   run_counted_insert as each run ends): nothing reads a scratch database's metrics.
-- Their SQL is the queue's, statement for statement: no plan the simulation's outcome depends
-- on changes with them (every such query orders by a unique key).
DO $$
DECLARE
    v_function regprocedure;
BEGIN
    FOR v_function IN
        SELECT p.oid::regprocedure FROM pg_catalog.pg_proc AS p
        WHERE p.pronamespace = 'tickq'::regnamespace AND p.prosecdef
        ORDER BY p.oid
    LOOP
        EXECUTE format('ALTER FUNCTION %s SECURITY INVOKER RESET search_path', v_function);
    END LOOP;
END
$$;
ALTER TABLE tickq.job_run DROP CONSTRAINT job_run_kind_fkey;
ALTER TABLE tickq.job_step DROP CONSTRAINT job_step_run_id_fkey;
ALTER TABLE tickq.agent_turn DROP CONSTRAINT agent_turn_run_id_fkey;
DO $$
DECLARE
    v_index regclass;
BEGIN
    FOR v_index IN
        SELECT i.indexrelid::regclass FROM pg_catalog.pg_index AS i
        WHERE i.indrelid = 'tickq.job_run'::regclass AND NOT i.indisunique
        ORDER BY i.indexrelid
    LOOP
        EXECUTE format('DROP INDEX %s', v_index);
    END LOOP;
END
$$;
DROP INDEX tickq.job_kind_claimable, tickq.job_kind_catch_up;
DO $$
DECLARE
    v_check record;
BEGIN
    FOR v_check IN
        SELECT c.conrelid::regclass AS relation, c.conname FROM pg_catalog.pg_constraint AS c
        WHERE c.contype = 'c'
            AND c.conrelid IN ('tickq.job_kind'::regclass, 'tickq.job_run'::regclass, 'tickq.pool_slot'::regclass)
        ORDER BY c.conrelid, c.conname
    LOOP
        EXECUTE format('ALTER TABLE %s DROP CONSTRAINT %I', v_check.relation, v_check.conname);
    END LOOP;
END
$$;
ALTER TABLE tickq.job_run DISABLE TRIGGER run_counted, DISABLE TRIGGER run_counted_insert;
