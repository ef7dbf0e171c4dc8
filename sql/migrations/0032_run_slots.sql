-- The slot a run covers, kept on its run: the latest scheduled instant it stands for, the
-- earliest one merged into it, and how many. A retry covers its first try's slots; a manual
-- run covers none. Runs from before this migration have no slot (NULL, 0).
ALTER TABLE tickq.job_run ADD COLUMN IF NOT EXISTS slot_at timestamptz;
ALTER TABLE tickq.job_run ADD COLUMN IF NOT EXISTS first_slot_at timestamptz;
ALTER TABLE tickq.job_run ADD COLUMN IF NOT EXISTS slots_covered integer NOT NULL DEFAULT 0;
COMMENT ON COLUMN tickq.job_run.slot_at IS
'The latest scheduled slot this run covers (its command''s TICKQ_SLOT): of a schedule run, the '
'last slot merged into it; of a retry, that of the run it retries; NULL for a manual run.';
COMMENT ON COLUMN tickq.job_run.first_slot_at IS
'The earliest scheduled slot this run covers (TICKQ_FIRST_SLOT): the kind''s due time for a '
'schedule run, that of the run it retries for a retry; NULL for a manual run.';
COMMENT ON COLUMN tickq.job_run.slots_covered IS
'How many scheduled slots this run covers (TICKQ_SLOTS): slots for a schedule run, the retried '
'run''s for a retry (whose slots is 0: it takes no slot of its own), 0 for a manual run.';

-- The kind keeps the slots of its latest claimed run, which a retry carries: the claim reads
-- them from the kind row it locks anyway, not from the run history.
ALTER TABLE tickq.job_kind ADD COLUMN IF NOT EXISTS slot_at timestamptz;
ALTER TABLE tickq.job_kind ADD COLUMN IF NOT EXISTS first_slot_at timestamptz;
ALTER TABLE tickq.job_kind ADD COLUMN IF NOT EXISTS slots_covered integer NOT NULL DEFAULT 0;
COMMENT ON COLUMN tickq.job_kind.slot_at IS
'The slot_at of the kind''s latest run claimed by tickq.claim_jobs (a retry carries it on).';
COMMENT ON COLUMN tickq.job_kind.first_slot_at IS
'The first_slot_at of the kind''s latest run claimed by tickq.claim_jobs.';
COMMENT ON COLUMN tickq.job_kind.slots_covered IS
'The slots_covered of the kind''s latest run claimed by tickq.claim_jobs.';

-- The claims and the history return the three columns: CREATE OR REPLACE cannot change a
-- return type, so the API files create these anew.
DROP FUNCTION IF EXISTS tickq.claim_kind(text, text, timestamptz);
DROP FUNCTION IF EXISTS tickq.claim_manual(text, text, text, timestamptz);
DROP FUNCTION IF EXISTS tickq.claim_jobs(integer, text, timestamptz);
DROP FUNCTION IF EXISTS tickq.kind_history(text, integer, timestamptz);
DROP FUNCTION IF EXISTS tickq.run_detail(bigint, timestamptz);
