-- Cancel: an operator asks the dispatcher holding a run, on whatever host, to stop it
-- (tickq.request_cancel); the dispatcher reads the requests for the runs it holds while they run
-- (tickq.cancels_requested) and reports the run as `cancelled`: not a failure (no retry, not in
-- the failure streak), the kind rescheduled as after a normal finish.
ALTER TYPE tickq.outcome ADD VALUE IF NOT EXISTS 'cancelled';

-- Who asked, why and when, kept on the run. `cancel_by` is the OS user and host the command ran
-- as, `cancel_role` the database role it connected as.
ALTER TABLE tickq.job_run
ADD COLUMN IF NOT EXISTS cancel_requested_at timestamptz,
ADD COLUMN IF NOT EXISTS cancel_by text,
ADD COLUMN IF NOT EXISTS cancel_role text,
ADD COLUMN IF NOT EXISTS cancel_reason text
CONSTRAINT run_cancel_reason_short CHECK (length(cancel_reason) <= 500);
COMMENT ON COLUMN tickq.job_run.cancel_requested_at IS
'When tickq.request_cancel asked this run''s dispatcher to stop it (NULL: never asked).';
COMMENT ON COLUMN tickq.job_run.cancel_by IS
'Who asked for the cancel: the OS user and host of the `tickq cancel` command.';
COMMENT ON COLUMN tickq.job_run.cancel_role IS
'The database role (session_user) that asked for the cancel.';
COMMENT ON COLUMN tickq.job_run.cancel_reason IS
'Why the cancel was asked (--reason), at most 500 characters.';

-- A step ends in any outcome but running and lost (cancelled among them). Written without
-- naming the new label: a value added by ALTER TYPE cannot be used in the same transaction.
ALTER TABLE tickq.job_step DROP CONSTRAINT step_outcome_final;
ALTER TABLE tickq.job_step ADD CONSTRAINT step_outcome_final
CHECK (outcome NOT IN ('running', 'lost'));

-- When each dispatcher last asked for the cancels of the runs it holds: the evidence that a
-- dispatcher holding a run is alive, which `tickq cancel` reports.
CREATE TABLE IF NOT EXISTS tickq.dispatcher_poll (
    name text PRIMARY KEY,
    polled_at timestamptz NOT NULL
);
COMMENT ON TABLE tickq.dispatcher_poll IS
'When each dispatcher (host:pid) last asked for cancels of the runs it holds (written by '
'tickq.cancels_requested every few seconds while it runs commands); pruned after 8 days by '
'tickq.sync_registry, as the dispatcher rows are.';
