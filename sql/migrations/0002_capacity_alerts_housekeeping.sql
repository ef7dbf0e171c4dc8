-- 0002: what keeps starvation from coming back: capacity settings, the due time of each run
-- (so waits can be measured), alert bookkeeping, and housekeeping settings.

ALTER TABLE tickq.settings
ADD COLUMN capacity_margin numeric NOT NULL DEFAULT 0.25
CONSTRAINT capacity_margin_fraction CHECK (capacity_margin >= 0 AND capacity_margin < 1),
ADD COLUMN alert_after integer NOT NULL DEFAULT 3 CONSTRAINT alert_after_positive CHECK (alert_after >= 1),
ADD COLUMN housekeeping_every interval NOT NULL DEFAULT '15 minutes'
CONSTRAINT housekeeping_every_positive CHECK (housekeeping_every > '0'::interval),
ADD COLUMN retention interval NOT NULL DEFAULT '30 days'
CONSTRAINT retention_positive CHECK (retention > '0'::interval),
ADD COLUMN keep_runs integer NOT NULL DEFAULT 100 CONSTRAINT keep_runs_positive CHECK (keep_runs >= 1);
COMMENT ON COLUMN tickq.settings.capacity_margin IS
'Share of the slots kept free when checking capacity: the total slot share must stay at or below '
'slots * (1 - capacity_margin).';
COMMENT ON COLUMN tickq.settings.keep_runs IS
'Housekeeping keeps at least this many of the latest runs (and drift rows) of each kind, however old.';

ALTER TABLE tickq.job_run ADD COLUMN due_at timestamptz;
COMMENT ON COLUMN tickq.job_run.due_at IS
'When the kind was due for this run; claimed_at - due_at is how long it waited for a slot.';

-- Recent successful durations per kind (capacity's 95th percentile) and pruning by age.
CREATE INDEX job_run_kind_ok ON tickq.job_run (kind, id DESC) WHERE outcome = 'ok';
CREATE INDEX job_run_finished_at ON tickq.job_run (finished_at) WHERE finished_at IS NOT NULL;

CREATE TYPE tickq.alert_condition AS ENUM ('failing', 'stale');
COMMENT ON TYPE tickq.alert_condition IS
'What an alert is about. failing: the failure streak reached settings.alert_after. stale: the kind '
'was due and left unclaimed longer than settings.stale_after.';

CREATE TABLE tickq.alert (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    kind text NOT NULL REFERENCES tickq.job_kind (name) ON UPDATE CASCADE,
    condition tickq.alert_condition NOT NULL,
    raised_at timestamptz NOT NULL,
    cleared_at timestamptz,
    failure_streak integer NOT NULL,
    CONSTRAINT cleared_after_raised CHECK (cleared_at IS NULL OR cleared_at >= raised_at)
);
COMMENT ON TABLE tickq.alert IS
'One row per episode of a condition on a kind: raised once when it starts, cleared once when it '
'recovers. The open row is unique per kind and condition, so however many dispatchers look, an '
'episode alerts once when raised and once when cleared.';
CREATE UNIQUE INDEX alert_open ON tickq.alert (kind, condition) WHERE cleared_at IS NULL;
CREATE INDEX alert_cleared_at ON tickq.alert (cleared_at) WHERE cleared_at IS NOT NULL;
