-- For the scratch template only (tickq.db.scratch), after the migration: two safeguards of a
-- queue that guard nothing in a database only the role that built it ever uses, and cost the
-- simulator's claims and reports about a tenth of their time (bench/README.md).
-- * The API's functions run as their caller (SECURITY INVOKER), not as their owner with a
--   pinned search_path: here the caller is their owner, and a scratch session pins the same
--   search_path itself (tickq.db.scratch.SESSION_SETTINGS). Each call of a function that sets
--   search_path saves, sets and restores it, and every claim and report makes several.
-- * job_run's foreign key to job_kind, checked for every run a claim opens and every report of
--   it: the simulator never renames or deletes a kind.
-- Their SQL is the queue's, statement for statement.
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
ALTER TABLE tickq.job_run DROP CONSTRAINT job_run_kind_fkey
