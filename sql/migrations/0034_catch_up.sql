-- 0034: a catch-up policy per kind (catch_up = "30m"): a missed slot runs only while it is at
-- most that late; each older one is recorded as a run of outcome `skipped` (no command started:
-- one row per merge, its slot_at, first_slot_at and slots_covered naming the slots it skipped),
-- and the kind moves on (tickq.catch_up_kinds, which a claim calls when such a kind is due).
ALTER TYPE tickq.outcome ADD VALUE IF NOT EXISTS 'skipped';

ALTER TABLE tickq.job_kind ADD COLUMN IF NOT EXISTS catch_up interval;
COMMENT ON COLUMN tickq.job_kind.catch_up IS
'The registry''s catch_up: a slot later than this is skipped (a job_run row of outcome skipped), '
'not run; NULL: every missed slot is merged into one run however late.';

-- The claim's rare-case test reads this index alone: empty unless some kind has a catch_up, and
-- then only the due ones of those kinds are in its range. Not run_id: a lease would no longer be
-- a HOT update (0008), and the kinds running, at most one a slot, are few to pass over.
CREATE INDEX IF NOT EXISTS job_kind_catch_up ON tickq.job_kind (due_at)
WHERE catch_up IS NOT NULL AND enabled AND (NOT irreversible OR armed_at IS NOT NULL);

-- The worst-case windows name the month end they hold (month_end): CREATE OR REPLACE cannot
-- change a return type, so the API files create these anew.
DROP FUNCTION IF EXISTS tickq.simulation_replay_window(numeric, timestamptz);
DROP FUNCTION IF EXISTS tickq.simulation_windows(timestamptz);
