-- 0014: irreversible kinds armed by a person's first run, and ordered chains of steps.
--
-- An irreversible kind (a payout, an email to every customer) is never claimed by a schedule
-- until a person has run it once by hand and it succeeded: that run arms it (armed_at,
-- armed_by, armed_run_id). The claim's partial index leaves unarmed irreversible kinds out, so
-- claim_jobs cannot see them, and a trigger refuses arming that no successful manual run
-- started by a person stands behind. command_since is when the kind's current command (or
-- steps, cwd, env) reached the queue: a run claimed before it ran another command and arms
-- nothing.
--
-- A chain is one kind whose registry entry has steps instead of a command; each step a run
-- executes is recorded in tickq.job_step.

ALTER TABLE tickq.job_kind
ADD COLUMN irreversible boolean NOT NULL DEFAULT false,
ADD COLUMN command_since timestamptz,
ADD COLUMN armed_at timestamptz,
ADD COLUMN armed_by text,
ADD COLUMN armed_run_id bigint;
COMMENT ON COLUMN tickq.job_kind.irreversible IS
'The registry marks the kind irreversible: never claimed by a schedule until armed.';
COMMENT ON COLUMN tickq.job_kind.command_since IS
'When the kind''s current command (or steps, cwd, env) was first synced; a change disarms an '
'irreversible kind, and only a run claimed since then can arm it.';
COMMENT ON COLUMN tickq.job_kind.armed_at IS
'When a successful manual run started by a person armed this irreversible kind; null: unarmed.';
COMMENT ON COLUMN tickq.job_kind.armed_by IS
'Who (the OS user) started the manual run that armed the kind.';
COMMENT ON COLUMN tickq.job_kind.armed_run_id IS
'The successful manual run that armed the kind.';
UPDATE tickq.job_kind SET command_since = created_at;

ALTER TABLE tickq.job_run ADD COLUMN run_by text;
COMMENT ON COLUMN tickq.job_run.run_by IS
'The person (OS user) who started a manual run from a terminal and confirmed it; null otherwise.';

-- Unarmed irreversible kinds are outside the claim's index: the lane queries repeat this
-- predicate, so the planner keeps reading the same short ranges.
DROP INDEX tickq.job_kind_claimable;
CREATE INDEX job_kind_claimable ON tickq.job_kind (priority, due_at, name)
WHERE enabled AND (NOT irreversible OR armed_at IS NOT NULL);

CREATE FUNCTION tickq.check_kind_armed() RETURNS trigger
LANGUAGE plpgsql
AS $$
DECLARE
    v_run tickq.job_run;
BEGIN
    IF (NEW.armed_at IS NULL) AND (NEW.armed_by IS NULL) AND (NEW.armed_run_id IS NULL) THEN
        RETURN NEW;
    END IF;
    -- Checked when the arming changes, not at every sync that rewrites the same values: the
    -- arming run may since have been pruned by housekeeping.
    IF TG_OP = 'UPDATE' AND (NEW.armed_at, NEW.armed_by, NEW.armed_run_id, NEW.irreversible, NEW.command_since)
        IS NOT DISTINCT FROM (OLD.armed_at, OLD.armed_by, OLD.armed_run_id, OLD.irreversible, OLD.command_since) THEN
        RETURN NEW;
    END IF;
    IF NOT NEW.irreversible THEN
        RAISE EXCEPTION 'kind "%" is not irreversible and cannot be armed', NEW.name
            USING ERRCODE = 'check_violation', CONSTRAINT = 'armed_by_a_run', SCHEMA = 'tickq',
            TABLE = 'job_kind';
    END IF;
    SELECT * INTO v_run FROM tickq.job_run AS r WHERE r.id = NEW.armed_run_id;
    IF NEW.armed_at IS NULL OR NEW.armed_by IS NULL OR NOT FOUND
        OR v_run.kind <> NEW.name OR v_run.run_trigger <> 'manual' OR v_run.outcome <> 'ok'
        OR v_run.run_by IS DISTINCT FROM NEW.armed_by
        OR v_run.claimed_at < NEW.command_since THEN
        RAISE EXCEPTION 'kind "%" can only be armed by a successful manual run started by a person',
            NEW.name
            USING ERRCODE = 'check_violation', CONSTRAINT = 'armed_by_a_run', SCHEMA = 'tickq',
            TABLE = 'job_kind',
            DETAIL = format('armed_run_id %s names no manual run of the current command that ended ok '
                'and was started by %s.', NEW.armed_run_id, coalesce(NEW.armed_by, 'nobody')),
            HINT = 'Run it once by hand: tickq run KIND, from a terminal.';
    END IF;
    RETURN NEW;
END
$$;
COMMENT ON FUNCTION tickq.check_kind_armed() IS
'Trigger: an irreversible kind is armed only by a manual run of its current command, started by '
'the person named in armed_by, that ended ok; fires only when the arming columns are written.';

CREATE TRIGGER kind_armed_by_a_run
BEFORE INSERT OR UPDATE OF armed_at, armed_by, armed_run_id, irreversible, command_since
ON tickq.job_kind
FOR EACH ROW EXECUTE FUNCTION tickq.check_kind_armed();

CREATE TABLE tickq.job_step (
    run_id bigint NOT NULL REFERENCES tickq.job_run (id) ON DELETE CASCADE,
    n integer NOT NULL CONSTRAINT step_number_positive CHECK (n >= 1),
    name text NOT NULL,
    outcome tickq.outcome NOT NULL
    CONSTRAINT step_outcome_final CHECK (outcome IN ('ok', 'failed', 'timeout', 'interrupted')),
    exit_code integer,
    started_at timestamptz NOT NULL,
    finished_at timestamptz NOT NULL,
    output_tail tickq.output_tail,
    PRIMARY KEY (run_id, n),
    CONSTRAINT step_finishes_after_start CHECK (finished_at >= started_at)
);
COMMENT ON TABLE tickq.job_step IS
'One row per step a chain''s run executed, written by tickq.report_step: outcome, exit code, '
'start and finish, and the last 64 KiB of its output. Steps a run did not execute have no row.';
