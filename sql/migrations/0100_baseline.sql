-- 0100: tickq's tables as they stand, in one file: types, tables with their constraints,
-- indexes and triggers, and the rows a queue starts with. Every function body (the triggers'
-- too), the views and the privileges are in sql/api, applied after the migrations and again
-- whenever those files change.
--
-- This file replaced the chain 0001_queue.sql .. 0090_no_dead_clock_parameters.sql. A database
-- that recorded that chain up to 0040 is recorded as at this baseline without running it, after
-- the chain's later files it lacks (sql/chain/), and then has exactly these tables
-- (python_runner/tickq/db/baseline.py; tests_py/test_schema_upgrade*.py hold the two equal). A
-- later change of a table is a migration numbered after this one, and changes tables only.

-- ---------------------------------------------------------------- types

CREATE TYPE tickq.priority AS ENUM ('urgent', 'high', 'normal', 'low');
COMMENT ON TYPE tickq.priority IS
'Claim order lane. urgent is claimed first, low last. Priority decides order, not whether a kind '
'holds a slot: cadence does (see tickq.capacity).';

CREATE TYPE tickq.outcome AS ENUM (
    'running', 'ok', 'failed', 'timeout', 'interrupted', 'lost', 'cancelled', 'skipped'
);
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

CREATE TYPE tickq.alert_condition AS ENUM ('failing', 'stale');
COMMENT ON TYPE tickq.alert_condition IS
'What an alert is about. failing: the failure streak reached settings.alert_after. stale: the '
'kind was due and left unclaimed longer than settings.stale_after.';

CREATE TYPE tickq.calendar AS (
    times time [],
    minutes smallint [],
    hours smallint [],
    weekdays smallint [],
    days smallint [],
    months smallint [],
    either boolean,
    timezone text
);
COMMENT ON TYPE tickq.calendar IS
'A calendar schedule as tickq.calendar_next reads it: wall-clock times or real-time minutes and '
'hours, weekday (ISO, nth, last), day-of-month and month filters, the cron OR rule, the zone.';

CREATE TYPE tickq.metrics_kind AS (
    name text,
    label text,
    outcomes bigint [],
    merged numeric,
    timed numeric,
    seconds numeric,
    buckets numeric [],
    last_ok timestamptz,
    lateness numeric,
    stale boolean,
    failure_streak integer,
    running boolean,
    paused boolean,
    weight integer
);
COMMENT ON TYPE tickq.metrics_kind IS
'A live kind as tickq.metrics_text reads it (tickq.metrics_kinds_at): its label value, its runs '
'that ended by outcome (ok to skipped), merged slots, runs with a duration, their seconds, the '
'cumulative counts per bound of metrics_buckets, the last success; lateness, stale, failure streak, '
'running, paused and weight.';

CREATE DOMAIN tickq.kind_attempts AS integer
CONSTRAINT attempts_not_negative CHECK (value >= 0);
COMMENT ON DOMAIN tickq.kind_attempts IS
'job_kind.attempts: tries of the current slot so far, 0 or more.';

CREATE DOMAIN tickq.failure_streak AS integer
CONSTRAINT failure_streak_not_negative CHECK (value >= 0);
COMMENT ON DOMAIN tickq.failure_streak IS
'job_kind.failure_streak: failed, timed-out or lost runs in a row, 0 or more.';

CREATE DOMAIN tickq.run_attempt AS integer
CONSTRAINT attempt_positive CHECK (value >= 1);
COMMENT ON DOMAIN tickq.run_attempt IS 'job_run.attempt: which try of its slot a run is, from 1.';

CREATE DOMAIN tickq.run_slots AS integer
CONSTRAINT slots_not_negative CHECK (value >= 0);
COMMENT ON DOMAIN tickq.run_slots IS
'job_run.slots: how many scheduled slots a run stands for, 0 or more.';

CREATE DOMAIN tickq.output_tail AS text
CONSTRAINT output_tail_bounded CHECK (char_length(value) <= 65536);
COMMENT ON DOMAIN tickq.output_tail IS
'job_run.output_tail: the last 64 KiB (65,536 characters) of a command''s output at most.';

CREATE DOMAIN tickq.slot_number AS integer
CONSTRAINT slot_number_positive CHECK (value >= 1);
COMMENT ON DOMAIN tickq.slot_number IS 'slot.n: a slot''s number, from 1.';

CREATE DOMAIN tickq.agent_turn_entry AS jsonb
CONSTRAINT agent_turn_entry_bounded CHECK (octet_length(value::text) <= 32768);
COMMENT ON DOMAIN tickq.agent_turn_entry IS
'agent_turn.entry: one turn of an agent run as JSON, at most 32 KiB of text.';

-- ---------------------------------------------------------------- functions named by tables

-- The constraints and triggers below name these functions, so they are declared here with the
-- signatures sql/api defines them with (sql/api/00_row_rules.sql, 09_agent_rules.sql,
-- 20_registry_values.sql): those files hold every body, and the migrator applies them right
-- after the migrations, in the same `tickq migrate`. Until then each lets every row pass (a
-- check answers "unknown"; a trigger returns the row unchanged).
CREATE FUNCTION tickq.is_timezone(p_zone text, p_now timestamptz DEFAULT now())
RETURNS boolean LANGUAGE sql AS $$ SELECT NULL::boolean $$;
CREATE FUNCTION tickq.within_limit(p_key text, p_value numeric, p_now timestamptz DEFAULT now())
RETURNS boolean LANGUAGE sql AS $$ SELECT NULL::boolean $$;
CREATE FUNCTION tickq.check_lease_covers_timeouts() RETURNS trigger
LANGUAGE plpgsql AS $$ BEGIN RETURN NEW; END $$;
CREATE FUNCTION tickq.forget_registry_digest() RETURNS trigger
LANGUAGE plpgsql AS $$ BEGIN RETURN NEW; END $$;
CREATE FUNCTION tickq.check_kind() RETURNS trigger
LANGUAGE plpgsql AS $$ BEGIN RETURN NEW; END $$;
CREATE FUNCTION tickq.check_kind_offset() RETURNS trigger
LANGUAGE plpgsql AS $$ BEGIN RETURN NEW; END $$;
CREATE FUNCTION tickq.check_kind_armed() RETURNS trigger
LANGUAGE plpgsql AS $$ BEGIN RETURN NEW; END $$;
CREATE FUNCTION tickq.refuse_deleting_running_runs() RETURNS trigger
LANGUAGE plpgsql AS $$ BEGIN RETURN NEW; END $$;
CREATE FUNCTION tickq.check_agent() RETURNS trigger
LANGUAGE plpgsql AS $$ BEGIN RETURN NEW; END $$;
CREATE FUNCTION tickq.agent_changed() RETURNS trigger
LANGUAGE plpgsql AS $$ BEGIN RETURN NEW; END $$;
CREATE FUNCTION tickq.count_run() RETURNS trigger
LANGUAGE plpgsql AS $$ BEGIN RETURN NEW; END $$;

-- ---------------------------------------------------------------- settings and slots

CREATE TABLE tickq.settings (
    id boolean PRIMARY KEY DEFAULT true CONSTRAINT settings_single_row CHECK (id),
    slots integer NOT NULL DEFAULT 3 CONSTRAINT slots_positive CHECK (slots >= 1),
    tick interval NOT NULL DEFAULT '5 minutes' CONSTRAINT tick_positive CHECK (tick > '0'::interval),
    stale_after interval NOT NULL DEFAULT '15 minutes'
    CONSTRAINT stale_after_positive CHECK (stale_after > '0'::interval),
    lease_margin interval NOT NULL DEFAULT '5 minutes'
    CONSTRAINT lease_margin_not_negative CHECK (lease_margin >= '0'::interval),
    lease interval NOT NULL DEFAULT '5 minutes' CONSTRAINT lease_positive CHECK (lease > '0'::interval),
    retry_base interval NOT NULL DEFAULT '30 seconds'
    CONSTRAINT retry_base_positive CHECK (retry_base > '0'::interval),
    retry_max interval NOT NULL DEFAULT '1 hour'
    CONSTRAINT retry_max_not_below_base CHECK (retry_max >= retry_base),
    timezone text NOT NULL DEFAULT 'UTC' CONSTRAINT timezone_known CHECK (tickq.is_timezone(timezone)),
    updated_at timestamptz NOT NULL DEFAULT now(),
    capacity_margin numeric NOT NULL DEFAULT 0.25
    CONSTRAINT capacity_margin_fraction CHECK (capacity_margin >= 0 AND capacity_margin < 1),
    alert_after integer NOT NULL DEFAULT 3 CONSTRAINT alert_after_positive CHECK (alert_after >= 1),
    housekeeping_every interval NOT NULL DEFAULT '15 minutes'
    CONSTRAINT housekeeping_every_positive CHECK (housekeeping_every > '0'::interval),
    retention interval NOT NULL DEFAULT '30 days'
    CONSTRAINT retention_positive CHECK (retention > '0'::interval),
    keep_runs integer NOT NULL DEFAULT 100 CONSTRAINT keep_runs_positive CHECK (keep_runs >= 1),
    agents boolean
);
-- The registry's bounds (tickq.registry_limits). NOT VALID: a queue whose settings were out of
-- bounds when the bounds came still migrated; its next sync refuses the registry that holds them.
ALTER TABLE tickq.settings
ADD CONSTRAINT slots_bounded CHECK (tickq.within_limit('slots', slots)) NOT VALID,
ADD CONSTRAINT keep_runs_bounded CHECK (tickq.within_limit('keep_runs', keep_runs)) NOT VALID,
ADD CONSTRAINT alert_after_bounded CHECK (tickq.within_limit('alert_after', alert_after)) NOT VALID,
ADD CONSTRAINT capacity_margin_bounded
CHECK (tickq.within_limit('capacity_margin', capacity_margin)) NOT VALID,
ADD CONSTRAINT tick_bounded CHECK (tickq.within_limit('tick', extract(EPOCH FROM tick))) NOT VALID,
ADD CONSTRAINT stale_after_bounded
CHECK (tickq.within_limit('stale_after', extract(EPOCH FROM stale_after))) NOT VALID,
ADD CONSTRAINT lease_margin_bounded
CHECK (tickq.within_limit('lease_margin', extract(EPOCH FROM lease_margin))) NOT VALID,
ADD CONSTRAINT retry_base_bounded
CHECK (tickq.within_limit('retry_base', extract(EPOCH FROM retry_base))) NOT VALID,
ADD CONSTRAINT retry_max_bounded
CHECK (tickq.within_limit('retry_max', extract(EPOCH FROM retry_max))) NOT VALID,
ADD CONSTRAINT housekeeping_every_bounded
CHECK (tickq.within_limit('housekeeping_every', extract(EPOCH FROM housekeeping_every))) NOT VALID,
ADD CONSTRAINT retention_bounded
CHECK (tickq.within_limit('retention', extract(EPOCH FROM retention))) NOT VALID;
COMMENT ON TABLE tickq.settings IS
'The one settings row. slots caps live leases across every dispatcher (a memory decision). '
'lease is the longest kind timeout plus lease_margin, kept by tickq.sync_registry; a deferred '
'constraint trigger guarantees it is never shorter than any kind''s timeout.';
COMMENT ON COLUMN tickq.settings.capacity_margin IS
'Share of the slots kept free when checking capacity: the total slot share must stay at or below '
'slots * (1 - capacity_margin).';
COMMENT ON COLUMN tickq.settings.keep_runs IS
'Housekeeping keeps at least this many of the latest runs (and drift rows) of each kind, however '
'old.';
COMMENT ON COLUMN tickq.settings.agents IS
'Whether the registry this queue was last synced with (in full) has an [agents] section: what '
'tickq.claim_jobs takes for a claimer without a tickq.dispatcher row of its own (its sync had '
'nothing to do, so its registry is that one). Written by tickq.sync_agents.';
CREATE CONSTRAINT TRIGGER lease_covers_timeouts AFTER UPDATE OF lease ON tickq.settings
DEFERRABLE INITIALLY DEFERRED
FOR EACH ROW EXECUTE FUNCTION tickq.check_lease_covers_timeouts();
CREATE TRIGGER settings_written AFTER UPDATE ON tickq.settings
FOR EACH STATEMENT EXECUTE FUNCTION tickq.forget_registry_digest();
INSERT INTO tickq.settings DEFAULT VALUES;

-- Leases are written without index entries: a lease changes no indexed column of job_kind, slot
-- or pool_slot, and their pages keep room for the new row versions (fillfactor), so taking and
-- freeing one are HOT updates. A kind's lease names its run (job_kind.run_id) without a foreign
-- key, for the same reason; a trigger on job_run keeps a running run from being deleted.
CREATE TABLE tickq.slot (
    n tickq.slot_number PRIMARY KEY,
    run_id bigint,
    leased_until timestamptz
) WITH (fillfactor = 50);
COMMENT ON TABLE tickq.slot IS
'One row per slot (settings.slots of them, kept by tickq.sync_registry). run_id is the live run '
'holding the slot, or null when free. Claims take free rows with FOR UPDATE SKIP LOCKED; a '
'report or an expired lease frees the row.';
COMMENT ON COLUMN tickq.slot.leased_until IS
'When the lease of the run in this slot expires: a copy of job_kind.leased_until, written with '
'it, so claims find expired leases among the slot rows.';
CREATE TRIGGER slots_written AFTER INSERT OR DELETE ON tickq.slot
FOR EACH STATEMENT EXECUTE FUNCTION tickq.forget_registry_digest();
INSERT INTO tickq.slot (n) SELECT generate_series(1, s.slots) FROM tickq.settings AS s;

-- ---------------------------------------------------------------- kinds and runs

CREATE TABLE tickq.job_kind (
    name text PRIMARY KEY,
    registry jsonb NOT NULL DEFAULT '{}',
    every interval,
    at_times time[],
    on_days smallint[],
    timezone text NOT NULL DEFAULT 'UTC',
    timeout interval NOT NULL,
    priority tickq.priority NOT NULL DEFAULT 'normal',
    retries integer NOT NULL DEFAULT 0,
    enabled boolean NOT NULL DEFAULT true,
    retired_at timestamptz,
    due_at timestamptz NOT NULL,
    next_trigger tickq.run_trigger NOT NULL DEFAULT 'schedule',
    attempts tickq.kind_attempts NOT NULL DEFAULT 0,
    failure_streak tickq.failure_streak NOT NULL DEFAULT 0,
    run_id bigint,
    leased_by text,
    leased_until timestamptz,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    last_run_id bigint,
    every_offset interval,
    irreversible boolean NOT NULL DEFAULT false,
    command_since timestamptz,
    armed_at timestamptz,
    armed_by text,
    armed_run_id bigint,
    paused_until timestamptz,
    paused_reason text,
    paused_by text,
    registry_digest text,
    days smallint[],
    months smallint[],
    cron text,
    slot_at timestamptz,
    first_slot_at timestamptz,
    slots_covered integer NOT NULL DEFAULT 0,
    weight integer NOT NULL DEFAULT 1 CONSTRAINT kind_weight_positive CHECK (weight >= 1),
    pools text[] NOT NULL DEFAULT '{}',
    catch_up interval,
    CONSTRAINT lease_complete CHECK (
        (run_id IS NULL AND leased_by IS NULL AND leased_until IS NULL)
        OR (run_id IS NOT NULL AND leased_by IS NOT NULL AND leased_until IS NOT NULL)
    )
) WITH (fillfactor = 70);
COMMENT ON TABLE tickq.job_kind IS
'One row per job kind. The schedule columns and registry (a mirror of the registry entry, for '
'people reading it in psql) are written only by tickq.sync_registry: the registry file wins. '
'Nothing here is ever executed. A kind gone from the registry is retired (disabled), never '
'deleted, so its history stays. run_id/leased_by/leased_until are the live lease.';
COMMENT ON COLUMN tickq.job_kind.last_run_id IS
'The last finished run of the kind, kept by tickq.finish_run (housekeeping never prunes it: it '
'keeps the latest runs of every kind).';
COMMENT ON COLUMN tickq.job_kind.every_offset IS
'Shift of an every cadence from its clock-aligned slots (0 <= offset < every); NULL for no shift '
'and for calendar kinds. Written only by tickq.sync_registry.';
COMMENT ON COLUMN tickq.job_kind.irreversible IS
'The registry marks the kind irreversible: never claimed by a schedule until armed.';
COMMENT ON COLUMN tickq.job_kind.command_since IS
'When the kind''s current command (or steps, cwd, env) was first synced; a change disarms an '
'irreversible kind, and only a run claimed since then can arm it.';
COMMENT ON COLUMN tickq.job_kind.armed_at IS
'When a successful manual run started by a person armed this irreversible kind; null: unarmed.';
COMMENT ON COLUMN tickq.job_kind.armed_by IS
'Who (the OS user) started the manual run that armed the kind.';
COMMENT ON COLUMN tickq.job_kind.armed_run_id IS 'The successful manual run that armed the kind.';
COMMENT ON COLUMN tickq.job_kind.paused_until IS
'Set by tickq.pause_kind: claims skip the kind until then (infinity: until tickq.resume_kind). A '
'pause whose time has passed has ended by itself.';
COMMENT ON COLUMN tickq.job_kind.paused_reason IS 'Why the kind was paused (the operator''s words).';
COMMENT ON COLUMN tickq.job_kind.paused_by IS 'Who paused the kind (user@host of the tickq pause).';
COMMENT ON COLUMN tickq.job_kind.registry_digest IS
'md5 of the registry mirror (registry::text) as tickq.write_kind last wrote it; a mirror that no '
'longer matches was changed behind the registry''s back.';
COMMENT ON COLUMN tickq.job_kind.days IS
'Days of the month of a calendar kind (1..31, -1 = the last day .. -31); NULL for every day.';
COMMENT ON COLUMN tickq.job_kind.months IS
'Months of a calendar kind (1 = January .. 12); NULL for every month.';
COMMENT ON COLUMN tickq.job_kind.cron IS
'A five-field cron string (or an @ form) as the registry gave it; NULL for every and at kinds.';
COMMENT ON COLUMN tickq.job_kind.slot_at IS
'The slot_at of the kind''s latest run claimed by tickq.claim_jobs (a retry carries it on).';
COMMENT ON COLUMN tickq.job_kind.first_slot_at IS
'The first_slot_at of the kind''s latest run claimed by tickq.claim_jobs.';
COMMENT ON COLUMN tickq.job_kind.slots_covered IS
'The slots_covered of the kind''s latest run claimed by tickq.claim_jobs.';
COMMENT ON COLUMN tickq.job_kind.weight IS
'How many of the global slots (settings.slots) each run of the kind takes: the registry''s weight '
'(default 1, at most slots); an agent''s kind takes [agents] weight.';
COMMENT ON COLUMN tickq.job_kind.pools IS
'The pools (tickq.pool) each run of the kind takes one slot of, besides its weight in the global '
'slots; sorted, no repeats.';
COMMENT ON COLUMN tickq.job_kind.catch_up IS
'The registry''s catch_up: a slot later than this is skipped (a job_run row of outcome skipped), '
'not run; NULL: every missed slot is merged into one run however late.';

-- The claim reads the due kinds in claim order from this index (enabled kinds, leased or not:
-- claims skip a leased kind by its run_id).
CREATE INDEX job_kind_claimable ON tickq.job_kind (priority, due_at, name)
WHERE enabled AND (NOT irreversible OR armed_at IS NOT NULL);
-- The claim's rare-case test for kinds with a catch_up reads this index alone: empty unless some
-- kind has one. Not run_id: a lease would no longer be a HOT update.
CREATE INDEX job_kind_catch_up ON tickq.job_kind (due_at)
WHERE catch_up IS NOT NULL AND enabled AND (NOT irreversible OR armed_at IS NOT NULL);
-- The claim's test for kinds that take more than one slot or a pool's.
CREATE INDEX job_kind_weighted ON tickq.job_kind (name) WHERE weight > 1 OR pools <> '{}';
-- The longest timeout of the live kinds: the lease (tickq.check_lease_covers_timeouts).
CREATE INDEX job_kind_timeout ON tickq.job_kind (timeout) WHERE retired_at IS NULL;

CREATE TRIGGER kind_valid
BEFORE INSERT OR UPDATE OF
name, every, at_times, on_days, days, months, cron, timezone, timeout, retries, enabled, retired_at
ON tickq.job_kind
FOR EACH ROW EXECUTE FUNCTION tickq.check_kind();
CREATE TRIGGER kind_offset_valid BEFORE INSERT OR UPDATE OF every, every_offset ON tickq.job_kind
FOR EACH ROW EXECUTE FUNCTION tickq.check_kind_offset();
CREATE TRIGGER kind_armed_by_a_run
BEFORE INSERT OR UPDATE OF armed_at, armed_by, armed_run_id, irreversible, command_since
ON tickq.job_kind
FOR EACH ROW EXECUTE FUNCTION tickq.check_kind_armed();
CREATE CONSTRAINT TRIGGER lease_covers_timeouts AFTER INSERT OR UPDATE OF timeout, retired_at
ON tickq.job_kind
DEFERRABLE INITIALLY DEFERRED
FOR EACH ROW EXECUTE FUNCTION tickq.check_lease_covers_timeouts();
CREATE TRIGGER kind_registry_written
AFTER INSERT OR DELETE OR UPDATE OF name, registry, every, every_offset, at_times, on_days, days,
months, cron, timezone, timeout, priority, retries, enabled, irreversible, retired_at, weight, pools
ON tickq.job_kind
FOR EACH STATEMENT EXECUTE FUNCTION tickq.forget_registry_digest();
CREATE TRIGGER kinds_truncated AFTER TRUNCATE ON tickq.job_kind
FOR EACH STATEMENT EXECUTE FUNCTION tickq.forget_registry_digest();

CREATE TABLE tickq.job_run (
    id bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY,
    kind text NOT NULL REFERENCES tickq.job_kind (name) ON UPDATE CASCADE,
    attempt tickq.run_attempt NOT NULL,
    run_trigger tickq.run_trigger NOT NULL,
    slots tickq.run_slots NOT NULL DEFAULT 0,
    dispatcher text NOT NULL,
    claimed_at timestamptz NOT NULL,
    started_at timestamptz,
    finished_at timestamptz,
    outcome tickq.outcome NOT NULL DEFAULT 'running',
    exit_code integer,
    output_tail tickq.output_tail,
    duration interval,
    due_at timestamptz,
    slot integer,
    late_report_at timestamptz,
    run_by text,
    cancel_requested_at timestamptz,
    cancel_by text,
    cancel_role text,
    cancel_reason text CONSTRAINT run_cancel_reason_short CHECK (length(cancel_reason) <= 500),
    slot_at timestamptz,
    first_slot_at timestamptz,
    slots_covered integer NOT NULL DEFAULT 0,
    weight integer NOT NULL DEFAULT 1,
    pools text[] NOT NULL DEFAULT '{}',
    CONSTRAINT finished_unless_running CHECK ((outcome = 'running') = (finished_at IS NULL))
) WITH (fillfactor = 90);
COMMENT ON TABLE tickq.job_run IS
'One row per run. slots is how many scheduled slots a schedule run stands for: more than 1 when '
'slots missed while the machine slept were merged into this run; 0 for retries and manual runs.';
COMMENT ON COLUMN tickq.job_run.output_tail IS
'The last 64 KiB of stdout and stderr together; invalid UTF-8 replaced.';
COMMENT ON COLUMN tickq.job_run.due_at IS
'When the kind was due for this run; claimed_at - due_at is how long it waited for a slot.';
COMMENT ON COLUMN tickq.job_run.slot IS
'The slot (tickq.slot.n) the run held while it ran; null for runs that ended before tickq '
'recorded it.';
COMMENT ON COLUMN tickq.job_run.late_report_at IS
'When the run''s real result arrived after its lease had expired (tickq.report_late_run, from a '
'dispatcher''s spool); null for a result reported in time.';
COMMENT ON COLUMN tickq.job_run.run_by IS
'The person (OS user) who started a manual run from a terminal and confirmed it; null otherwise.';
COMMENT ON COLUMN tickq.job_run.cancel_requested_at IS
'When tickq.request_cancel asked this run''s dispatcher to stop it (NULL: never asked).';
COMMENT ON COLUMN tickq.job_run.cancel_by IS
'Who asked for the cancel, as tickq.asked_by wrote it: the session''s role (and how the server '
'authenticated it, when that names someone else), then what the client claims (the OS user and '
'host of `tickq cancel`), labelled as a claim.';
COMMENT ON COLUMN tickq.job_run.cancel_role IS
'The database role (session_user) that asked for the cancel.';
COMMENT ON COLUMN tickq.job_run.cancel_reason IS
'Why the cancel was asked (--reason), at most 500 characters.';
COMMENT ON COLUMN tickq.job_run.slot_at IS
'The latest scheduled slot this run covers (its command''s TICKQ_SLOT): of a schedule run, the '
'last slot merged into it; of a retry, that of the run it retries; NULL for a manual run.';
COMMENT ON COLUMN tickq.job_run.first_slot_at IS
'The earliest scheduled slot this run covers (TICKQ_FIRST_SLOT): the kind''s due time for a '
'schedule run, that of the run it retries for a retry; NULL for a manual run.';
COMMENT ON COLUMN tickq.job_run.slots_covered IS
'How many scheduled slots this run covers (TICKQ_SLOTS): slots for a schedule run, the retried '
'run''s for a retry (whose slots is 0: it takes no slot of its own), 0 for a manual run.';
COMMENT ON COLUMN tickq.job_run.weight IS
'How many global slot rows the run held (its kind''s weight when claimed).';
COMMENT ON COLUMN tickq.job_run.pools IS
'The pools the run held one slot of (its kind''s pools when claimed).';
CREATE INDEX job_run_kind_id ON tickq.job_run (kind, id DESC);
CREATE INDEX job_run_kind_ok ON tickq.job_run (kind, id DESC) WHERE outcome = 'ok';
CREATE INDEX job_run_finished_at ON tickq.job_run (finished_at) WHERE finished_at IS NOT NULL;
CREATE TRIGGER running_runs_stay AFTER DELETE ON tickq.job_run
REFERENCING OLD TABLE AS gone
FOR EACH STATEMENT EXECUTE FUNCTION tickq.refuse_deleting_running_runs();

CREATE TABLE tickq.job_step (
    run_id bigint NOT NULL REFERENCES tickq.job_run (id) ON DELETE CASCADE,
    n integer NOT NULL CONSTRAINT step_number_positive CHECK (n >= 1),
    name text NOT NULL,
    outcome tickq.outcome NOT NULL CONSTRAINT step_outcome_final CHECK (outcome NOT IN ('running', 'lost')),
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

CREATE TABLE tickq.run_total (
    kind text NOT NULL REFERENCES tickq.job_kind (name) ON UPDATE CASCADE ON DELETE CASCADE,
    outcome tickq.outcome NOT NULL,
    runs bigint NOT NULL DEFAULT 0,
    merged_slots bigint NOT NULL DEFAULT 0,
    timed_runs bigint NOT NULL DEFAULT 0,
    seconds double precision NOT NULL DEFAULT 0,
    buckets bigint[] NOT NULL DEFAULT '{}',
    last_finished_at timestamptz,
    PRIMARY KEY (kind, outcome)
);
COMMENT ON TABLE tickq.run_total IS
'Runs pruned from job_run by housekeeping, per kind and outcome: how many, the slots merged into '
'them, how many had a duration and their seconds, the cumulative counts per bound of '
'metrics_buckets(), the last finish. tickq.metrics_text adds the runs still in job_run.';

-- Every run that ended, per kind, counted as it ends (the metrics read these counts, not the
-- history): a run that ended is added, a change to one that had ended takes its old values out
-- first; housekeeping's pruning changes no count. runs counts by outcome in the enum's order
-- (running's place stays 0); buckets the runs whose duration was at most each bound of
-- tickq.metrics_buckets(), in order (cumulative).
CREATE TABLE tickq.run_count (
    kind text PRIMARY KEY REFERENCES tickq.job_kind (name) ON UPDATE CASCADE ON DELETE CASCADE,
    runs bigint[] NOT NULL DEFAULT '{0,0,0,0,0,0,0,0}',
    merged_slots bigint NOT NULL DEFAULT 0,
    timed_runs bigint NOT NULL DEFAULT 0,
    seconds numeric NOT NULL DEFAULT 0,
    buckets bigint[] NOT NULL DEFAULT '{0,0,0,0,0,0,0,0,0}',
    last_ok timestamptz
);
COMMENT ON TABLE tickq.run_count IS
'Every run that ended, per kind, kept or pruned: how many by outcome (the enum''s order), the slots '
'merged into them, how many had a duration and their seconds, the cumulative counts per bound of '
'metrics_buckets(), the last finish of one that ended ok. Kept by the triggers run_counted and '
'run_counted_insert as runs end; what tickq.metrics_text prints.';
CREATE TRIGGER run_counted_insert AFTER INSERT ON tickq.job_run
FOR EACH ROW WHEN (new.outcome <> 'running') EXECUTE FUNCTION tickq.count_run();
-- A kind renamed takes its counts along by run_count's own foreign key, not through this trigger.
CREATE TRIGGER run_counted AFTER UPDATE OF outcome, duration, slots, finished_at ON tickq.job_run
FOR EACH ROW WHEN (
    (old.outcome <> 'running' OR new.outcome <> 'running')
    AND (
        old.outcome IS DISTINCT FROM new.outcome OR old.duration IS DISTINCT FROM new.duration
        OR old.slots IS DISTINCT FROM new.slots OR old.finished_at IS DISTINCT FROM new.finished_at
    )
)
EXECUTE FUNCTION tickq.count_run();

-- ---------------------------------------------------------------- alerts and drift

CREATE TABLE tickq.alert (
    id bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY,
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

CREATE TABLE tickq.drift (
    id bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY,
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

-- ---------------------------------------------------------------- dispatchers and the registry

CREATE TABLE tickq.dispatcher (
    name text PRIMARY KEY,
    fingerprint text NOT NULL,
    lease interval NOT NULL CONSTRAINT dispatcher_lease_positive CHECK (lease > '0'::interval),
    synced_at timestamptz NOT NULL,
    agents boolean NOT NULL DEFAULT true
);
COMMENT ON TABLE tickq.dispatcher IS
'One row per dispatcher name (host:pid) that synced a registry lately: fingerprint (sha256 of the '
'registry JSON it sent), lease (its longest timeout plus its lease_margin: claims it makes are '
'leased at least this long), synced_at. Written by tickq.sync_registry, which also prunes it.';
COMMENT ON COLUMN tickq.dispatcher.agents IS
'Whether the registry this dispatcher last synced has an [agents] section: only then does '
'tickq.claim_jobs lease it agent runs (kinds agent.NAME).';
CREATE INDEX dispatcher_synced_at ON tickq.dispatcher (synced_at);

CREATE TABLE tickq.dispatcher_tick (
    host text PRIMARY KEY,
    dispatcher text NOT NULL,
    last_tick_at timestamptz NOT NULL
);
COMMENT ON TABLE tickq.dispatcher_tick IS
'The last tick that ended on each host (written by tickq.record_tick): a timer that stopped '
'firing shows in tickq.health_problems. One row per host, since every tick is a new process.';

CREATE TABLE tickq.dispatcher_poll (
    name text PRIMARY KEY,
    polled_at timestamptz NOT NULL
);
COMMENT ON TABLE tickq.dispatcher_poll IS
'When each dispatcher (host:pid) last asked for cancels of the runs it holds (written by '
'tickq.cancels_requested every few seconds while it runs commands); pruned after 8 days by '
'tickq.sync_registry, as the dispatcher rows are.';

CREATE TABLE tickq.queue_registry (
    "only" boolean PRIMARY KEY DEFAULT true CHECK ("only"),
    path text,
    host text,
    synced_at timestamptz,
    digest text,
    resolved text,
    project text
);
COMMENT ON TABLE tickq.queue_registry IS
'One row: what is known of the registry that synced this queue. path: the registry file as the '
'user named it (absolute, links not followed); resolved: the same with links followed; project: '
'its settings.project, if any; host: where the last sync that named a file came from; synced_at: '
'when; digest: see its column. tickq.same_project says whether another registry is this project.';
COMMENT ON COLUMN tickq.queue_registry.path IS
'The registry file as given (absolute, links not followed: a deploy''s `current` link stays one '
'path).';
COMMENT ON COLUMN tickq.queue_registry.digest IS
'sha256 of the registry JSON (without its "dispatcher" key) and of the API checksum, written by '
'the last tickq.sync_registry that left the queue matching it; NULL once a kind''s registry '
'columns, the settings, the [agents] caps or the slot rows are written by anything else.';
COMMENT ON COLUMN tickq.queue_registry.resolved IS 'The registry file with every link followed.';
COMMENT ON COLUMN tickq.queue_registry.project IS
'The registry''s settings.project: a name that makes two checkouts (other paths, other hosts) one '
'project.';
INSERT INTO tickq.queue_registry ("only") VALUES (true);

-- ---------------------------------------------------------------- pools

CREATE TABLE tickq.pool (
    name text PRIMARY KEY CONSTRAINT pool_name_format CHECK (name ~ '^[a-z0-9][a-z0-9_-]{0,62}$'),
    slots integer NOT NULL CONSTRAINT pool_slots_not_negative CHECK (slots >= 0),
    updated_at timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE tickq.pool IS
'The registry''s [pools.NAME] tables: slots is how many runs of the kinds naming the pool go on '
'at once (1: mutual exclusion). Kept by tickq.sync_pools; a pool gone from the registry is '
'deleted once no run holds its rows (slots 0 until then).';
CREATE TRIGGER pools_written AFTER INSERT OR DELETE OR UPDATE ON tickq.pool
FOR EACH STATEMENT EXECUTE FUNCTION tickq.forget_registry_digest();

CREATE TABLE tickq.pool_slot (
    pool text NOT NULL REFERENCES tickq.pool (name) ON DELETE CASCADE,
    n integer NOT NULL CONSTRAINT pool_slot_number_positive CHECK (n >= 1),
    run_id bigint,
    leased_until timestamptz,
    PRIMARY KEY (pool, n)
) WITH (fillfactor = 50);
COMMENT ON TABLE tickq.pool_slot IS
'One row per slot of a pool (tickq.pool.slots of them, kept by tickq.sync_pools). run_id is the '
'live run holding it, or null when free; leased_until a copy of its lease. A claim takes one free '
'row of each pool its kind names with FOR UPDATE SKIP LOCKED; a report or an expired lease frees '
'it.';
COMMENT ON COLUMN tickq.pool_slot.run_id IS 'The live run holding this pool slot, or null when free.';
COMMENT ON COLUMN tickq.pool_slot.leased_until IS 'When the lease of the run in this pool slot expires.';
CREATE TRIGGER pool_slots_written AFTER INSERT OR DELETE ON tickq.pool_slot
FOR EACH STATEMENT EXECUTE FUNCTION tickq.forget_registry_digest();

-- ---------------------------------------------------------------- agents

CREATE TABLE tickq.agent_settings (
    id boolean PRIMARY KEY DEFAULT true CONSTRAINT agent_settings_single_row CHECK (id),
    priority tickq.priority NOT NULL DEFAULT 'normal',
    max_turns integer NOT NULL DEFAULT 6
    CONSTRAINT agent_max_turns_cap CHECK (tickq.within_limit('agents.max_turns', max_turns)),
    max_timeout interval NOT NULL DEFAULT '10 minutes'
    CONSTRAINT agent_max_timeout_cap CHECK (tickq.within_limit('agents.timeout', extract(EPOCH FROM max_timeout))),
    retries integer NOT NULL DEFAULT 0
    CONSTRAINT agent_retries_bounded CHECK (tickq.within_limit('agents.retries', retries)),
    tools text[] NOT NULL DEFAULT '{}',
    updated_at timestamptz NOT NULL DEFAULT now(),
    weight integer NOT NULL DEFAULT 1 CONSTRAINT agent_weight_positive CHECK (weight >= 1)
);
COMMENT ON TABLE tickq.agent_settings IS
'The one row of the registry''s [agents] section as tickq.sync_registry last saw it: the lane '
'agents run in, the caps (turns at most 6, watchdog at most 10 minutes; also the defaults), the '
'retries of a failed agent run, and the names of the tools agents may be given.';
COMMENT ON COLUMN tickq.agent_settings.weight IS
'The weight of every agent''s kind ([agents] weight, default 1).';
CREATE TRIGGER agent_settings_written AFTER UPDATE ON tickq.agent_settings
FOR EACH STATEMENT EXECUTE FUNCTION tickq.forget_registry_digest();
INSERT INTO tickq.agent_settings DEFAULT VALUES;

CREATE TABLE tickq.agent (
    id bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY,
    name text NOT NULL CONSTRAINT agent_name_unique UNIQUE,
    prompt text NOT NULL,
    every interval,
    at_times time[],
    on_days smallint[],
    timezone text NOT NULL DEFAULT 'UTC',
    max_turns integer NOT NULL DEFAULT 6,
    timeout interval NOT NULL DEFAULT '10 minutes',
    owner text,
    tools text[] NOT NULL DEFAULT '{}',
    paused boolean NOT NULL DEFAULT false,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    days smallint[],
    months smallint[],
    cron text
);
COMMENT ON TABLE tickq.agent IS
'One row per user-built agent: a prompt (data the agent runner reads, never a command), a '
'schedule (every, or at_times/on_days in timezone), its turn and time limits within the caps of '
'tickq.agent_settings, an owner label and the registry tools it may use. Its queue row is the '
'job_kind "agent.<name>", created, rescheduled, paused and retired by triggers on this table.';
COMMENT ON COLUMN tickq.agent.days IS
'Days of the month of an at schedule (1..31, -1..-31 from the month''s end), as job_kind.days.';
COMMENT ON COLUMN tickq.agent.months IS 'Months of an at schedule (1..12), as job_kind.months.';
COMMENT ON COLUMN tickq.agent.cron IS
'A five-field cron string (or an @ form) in timezone, as job_kind.cron.';
CREATE TRIGGER agent_valid BEFORE INSERT OR UPDATE ON tickq.agent
FOR EACH ROW EXECUTE FUNCTION tickq.check_agent();
CREATE TRIGGER agent_kind_follows AFTER INSERT OR DELETE OR UPDATE ON tickq.agent
FOR EACH ROW EXECUTE FUNCTION tickq.agent_changed();

CREATE TABLE tickq.agent_turn (
    run_id bigint NOT NULL REFERENCES tickq.job_run (id) ON DELETE CASCADE,
    turn integer NOT NULL
    CONSTRAINT agent_turn_number CHECK (turn >= 1 AND tickq.within_limit('agents.max_turns', turn)),
    recorded_at timestamptz NOT NULL,
    entry tickq.agent_turn_entry NOT NULL,
    PRIMARY KEY (run_id, turn)
);
COMMENT ON TABLE tickq.agent_turn IS
'The transcript of agent runs: per turn the request summary, the tool calls with their arguments '
'and output tails, the answer and the token counts the server reported. At most six turns of 32 '
'KiB per run; pruned with the run by housekeeping.';
