-- 0009: job_kind.run_id without a foreign key (figures in bench/README.md).
--
-- The foreign key from job_kind.run_id to job_run ran one lookup query per leased kind, about
-- a twentieth of a claim. What it guarded, a lease naming a run that does not exist, holds
-- without it: a claim writes the run and the lease in one statement, a lease only ever names a
-- run that is still running, and this trigger refuses to delete a running run (housekeeping
-- prunes finished runs only). The foreign key from job_run.kind to job_kind stays.

ALTER TABLE tickq.job_kind DROP CONSTRAINT job_kind_run_fk;

CREATE FUNCTION tickq.refuse_deleting_running_runs() RETURNS trigger
LANGUAGE plpgsql
AS $$
DECLARE
    v_run tickq.job_run;
BEGIN
    SELECT * INTO v_run FROM gone AS g WHERE g.outcome = 'running' LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'run % of kind "%" is still running and cannot be deleted', v_run.id, v_run.kind
            USING ERRCODE = 'foreign_key_violation',
            DETAIL = 'Its kind''s lease names it until the run is reported or its lease expires.',
            HINT = 'Delete finished runs only (outcome <> ''running'').';
    END IF;
    RETURN NULL;
END
$$;
COMMENT ON FUNCTION tickq.refuse_deleting_running_runs() IS
'Trigger: refuses a DELETE of job_run that would remove a running run, the one a kind''s lease '
'(job_kind.run_id) names.';

CREATE TRIGGER running_runs_stay
AFTER DELETE ON tickq.job_run
REFERENCING OLD TABLE AS gone
FOR EACH STATEMENT EXECUTE FUNCTION tickq.refuse_deleting_running_runs();
