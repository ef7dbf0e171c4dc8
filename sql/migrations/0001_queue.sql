-- 0001: the queue. One row per job kind, one row per run, one settings row, the drift log.
-- Forward-only: a later change is a new numbered file, never an edit of this one.

CREATE TYPE tickq.priority AS ENUM ('urgent', 'high', 'normal', 'low');
COMMENT ON TYPE tickq.priority IS
'Claim order lane. urgent is claimed first, low last. Priority decides order, not whether a kind '
'holds a slot: cadence does (see tickq.capacity).';

CREATE TYPE tickq.outcome AS ENUM ('running', 'ok', 'failed', 'timeout', 'interrupted', 'lost');
COMMENT ON TYPE tickq.outcome IS
'How a run ended. running: leased and not yet reported. ok: exit status 0. failed: non-zero exit '
'or the command could not start. timeout: the watchdog killed it at the kind''s timeout. '
'interrupted: the dispatcher was told to stop (SIGTERM/SIGINT) and stopped it; not the command''s '
'fault, so the kind is due again at once and its failure streak is unchanged. lost: the lease '
'expired without a report (the dispatcher was killed or lost its database).';

CREATE TYPE tickq.run_trigger AS ENUM ('schedule', 'retry', 'manual');
COMMENT ON TYPE tickq.run_trigger IS
'Why a run ran. schedule: its slot came. retry: an earlier attempt failed and retries remain. '
'manual: a person asked for it (tickq run KIND).';

CREATE FUNCTION tickq.is_timezone(p_zone text, p_now timestamptz DEFAULT now())
RETURNS boolean
LANGUAGE plpgsql STABLE
AS $$
BEGIN
    -- An IANA name such as Europe/London or UTC. PostgreSQL alone would also take POSIX strings
    -- such as 'UTC+3' (with the sign reversed), which are a trap in a schedule: refused here.
    IF p_zone IS NULL OR p_zone !~ '^[A-Za-z][A-Za-z0-9_+-]*(/[A-Za-z0-9_+-]+)*$'
        OR (p_zone ~ '[+-][0-9]' AND p_zone !~ '^Etc/') THEN
        RETURN false;
    END IF;
    PERFORM p_now AT TIME ZONE p_zone;
    RETURN true;
EXCEPTION WHEN invalid_parameter_value THEN
    RETURN false;
END
$$;
COMMENT ON FUNCTION tickq.is_timezone(text, timestamptz) IS
'True when p_zone is a time zone name PostgreSQL knows (IANA names such as Europe/London).';

CREATE TABLE tickq.settings (
    id boolean PRIMARY KEY DEFAULT true CONSTRAINT settings_single_row CHECK (id),
    slots integer NOT NULL DEFAULT 3 CONSTRAINT slots_positive CHECK (slots >= 1),
    tick interval NOT NULL DEFAULT '5 minutes'
    CONSTRAINT tick_positive CHECK (tick > '0'::interval),
    stale_after interval NOT NULL DEFAULT '15 minutes'
    CONSTRAINT stale_after_positive CHECK (stale_after > '0'::interval),
    lease_margin interval NOT NULL DEFAULT '5 minutes'
    CONSTRAINT lease_margin_not_negative CHECK (lease_margin >= '0'::interval),
    lease interval NOT NULL DEFAULT '5 minutes'
    CONSTRAINT lease_positive CHECK (lease > '0'::interval),
    retry_base interval NOT NULL DEFAULT '30 seconds'
    CONSTRAINT retry_base_positive CHECK (retry_base > '0'::interval),
    retry_max interval NOT NULL DEFAULT '1 hour'
    CONSTRAINT retry_max_not_below_base CHECK (retry_max >= retry_base),
    timezone text NOT NULL DEFAULT 'UTC'
    CONSTRAINT timezone_known CHECK (tickq.is_timezone(timezone)),
    updated_at timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE tickq.settings IS
'The one settings row. slots caps live leases across every dispatcher (a memory decision). '
'lease is the longest kind timeout plus lease_margin, kept by tickq.sync_registry; a deferred '
'constraint trigger guarantees it is never shorter than any kind''s timeout.';
INSERT INTO tickq.settings DEFAULT VALUES;

CREATE TABLE tickq.job_kind (
    name text PRIMARY KEY
    CONSTRAINT name_format CHECK (name ~ '^[a-z0-9][a-z0-9_.-]{0,99}$'),
    registry jsonb NOT NULL DEFAULT '{}',
    every interval CONSTRAINT every_positive CHECK (every > '0'::interval),
    at_times time[] CONSTRAINT at_times_not_empty CHECK (cardinality(at_times) >= 1),
    on_days smallint[] CONSTRAINT on_days_iso CHECK (
        cardinality(on_days) >= 1 AND on_days <@ ARRAY[1, 2, 3, 4, 5, 6, 7]::smallint[]
    ),
    timezone text NOT NULL DEFAULT 'UTC'
    CONSTRAINT timezone_known CHECK (tickq.is_timezone(timezone)),
    timeout interval NOT NULL CONSTRAINT timeout_positive CHECK (timeout > '0'::interval),
    priority tickq.priority NOT NULL DEFAULT 'normal',
    retries integer NOT NULL DEFAULT 0 CONSTRAINT retries_not_negative CHECK (retries >= 0),
    enabled boolean NOT NULL DEFAULT true,
    retired_at timestamptz,
    due_at timestamptz NOT NULL,
    next_trigger tickq.run_trigger NOT NULL DEFAULT 'schedule',
    attempts integer NOT NULL DEFAULT 0 CONSTRAINT attempts_not_negative CHECK (attempts >= 0),
    failure_streak integer NOT NULL DEFAULT 0
    CONSTRAINT failure_streak_not_negative CHECK (failure_streak >= 0),
    run_id bigint,
    leased_by text,
    leased_until timestamptz,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT one_schedule CHECK ((every IS NULL) <> (at_times IS NULL)),
    CONSTRAINT on_days_need_at CHECK (on_days IS NULL OR at_times IS NOT NULL),
    CONSTRAINT lease_complete CHECK (
        (run_id IS NULL AND leased_by IS NULL AND leased_until IS NULL)
        OR (run_id IS NOT NULL AND leased_by IS NOT NULL AND leased_until IS NOT NULL)
    ),
    CONSTRAINT retired_is_disabled CHECK (retired_at IS NULL OR NOT enabled)
);
COMMENT ON TABLE tickq.job_kind IS
'One row per job kind. The schedule columns and registry (a mirror of the registry entry, for '
'people reading it in psql) are written only by tickq.sync_registry: the registry file wins. '
'Nothing here is ever executed. A kind gone from the registry is retired (disabled), never '
'deleted, so its history stays. run_id/leased_by/leased_until are the live lease.';

-- A kind that can be claimed: enabled and not leased. One index per question the claim asks.
CREATE INDEX job_kind_claimable ON tickq.job_kind (priority, due_at)
WHERE enabled AND run_id IS NULL;
CREATE INDEX job_kind_claimable_by_due ON tickq.job_kind (due_at)
WHERE enabled AND run_id IS NULL;
-- Live and expired leases: never more than a handful of rows.
CREATE INDEX job_kind_leased ON tickq.job_kind (leased_until) WHERE run_id IS NOT NULL;
-- The longest timeout, for the lease guarantee, without a scan.
CREATE INDEX job_kind_timeout ON tickq.job_kind (timeout) WHERE retired_at IS NULL;

CREATE TABLE tickq.job_run (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    kind text NOT NULL REFERENCES tickq.job_kind (name) ON UPDATE CASCADE,
    attempt integer NOT NULL CONSTRAINT attempt_positive CHECK (attempt >= 1),
    run_trigger tickq.run_trigger NOT NULL,
    slots integer NOT NULL DEFAULT 0 CONSTRAINT slots_not_negative CHECK (slots >= 0),
    dispatcher text NOT NULL,
    claimed_at timestamptz NOT NULL,
    started_at timestamptz,
    finished_at timestamptz,
    outcome tickq.outcome NOT NULL DEFAULT 'running',
    exit_code integer,
    output_tail text,
    duration interval,
    CONSTRAINT finished_unless_running CHECK ((outcome = 'running') = (finished_at IS NULL)),
    CONSTRAINT output_tail_bounded CHECK (char_length(output_tail) <= 65536)
);
COMMENT ON TABLE tickq.job_run IS
'One row per run. slots is how many scheduled slots a schedule run stands for: more than 1 when '
'slots missed while the machine slept were merged into this run; 0 for retries and manual runs.';
COMMENT ON COLUMN tickq.job_run.output_tail IS
'The last 64 KiB of stdout and stderr together; invalid UTF-8 replaced.';

ALTER TABLE tickq.job_kind ADD CONSTRAINT job_kind_run_fk
FOREIGN KEY (run_id) REFERENCES tickq.job_run (id);

-- The last finished run of each kind (queue_status) and a kind's history, from an index.
CREATE INDEX job_run_kind_finished ON tickq.job_run (kind, finished_at DESC)
WHERE finished_at IS NOT NULL;
CREATE INDEX job_run_kind_id ON tickq.job_run (kind, id DESC);
CREATE INDEX job_run_running ON tickq.job_run (id) WHERE outcome = 'running';

CREATE TABLE tickq.drift (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    kind text,
    field text NOT NULL,
    stored_value jsonb,
    registry_value jsonb,
    detected_at timestamptz NOT NULL
);
COMMENT ON TABLE tickq.drift IS
'Each difference tickq.sync_registry found between a stored row and the registry file, which '
'won. kind is null for settings. field "kind" with a null registry_value: the kind left the '
'registry and was retired; with a null stored_value: a retired kind came back.';
CREATE INDEX drift_detected_at ON tickq.drift (detected_at);

-- The lease must never be shorter than a watchdog: checked at commit, so tickq.sync_registry may
-- change timeouts and the lease in any order inside one transaction.
CREATE FUNCTION tickq.check_lease_covers_timeouts() RETURNS trigger
LANGUAGE plpgsql
AS $$
DECLARE
    v_lease interval;
    v_kind text;
    v_timeout interval;
BEGIN
    SELECT s.lease INTO v_lease FROM tickq.settings AS s;
    SELECT k.name, k.timeout INTO v_kind, v_timeout
    FROM tickq.job_kind AS k
    WHERE k.retired_at IS NULL
    ORDER BY k.timeout DESC
    LIMIT 1;
    IF v_timeout > v_lease THEN
        RAISE EXCEPTION 'lease % is shorter than the timeout % of kind "%"', v_lease, v_timeout, v_kind
            USING ERRCODE = 'TQ004',
            DETAIL = 'A lease shorter than a watchdog would let a second dispatcher start a kind that is still running.',
            HINT = 'Let tickq.sync_registry set the lease (longest timeout plus lease_margin).';
    END IF;
    RETURN NULL;
END
$$;
COMMENT ON FUNCTION tickq.check_lease_covers_timeouts() IS
'Constraint trigger: refuses a commit that leaves settings.lease shorter than any kind''s timeout.';

CREATE CONSTRAINT TRIGGER lease_covers_timeouts
AFTER INSERT OR UPDATE OF timeout, retired_at ON tickq.job_kind
DEFERRABLE INITIALLY DEFERRED
FOR EACH ROW EXECUTE FUNCTION tickq.check_lease_covers_timeouts();

CREATE CONSTRAINT TRIGGER lease_covers_timeouts
AFTER UPDATE OF lease ON tickq.settings
DEFERRABLE INITIALLY DEFERRED
FOR EACH ROW EXECUTE FUNCTION tickq.check_lease_covers_timeouts();
