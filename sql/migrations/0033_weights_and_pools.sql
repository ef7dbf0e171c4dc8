-- 0033: weights and pools. A kind of weight w takes w of the global slots (w rows of tickq.slot,
-- each holding its run), and a kind naming pools takes one row of each pool's own slots
-- (tickq.pool_slot, kept like tickq.slot is for the global limit). The rows enforce the limits,
-- as the slot rows do: claims take free rows with FOR UPDATE SKIP LOCKED and never count.

CREATE TABLE tickq.pool (
    name text PRIMARY KEY CONSTRAINT pool_name_format CHECK (name ~ '^[a-z0-9][a-z0-9_-]{0,62}$'),
    -- 0 only for a pool gone from the registry while runs still hold its rows (draining).
    slots integer NOT NULL CONSTRAINT pool_slots_not_negative CHECK (slots >= 0),
    updated_at timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE tickq.pool IS
'The registry''s [pools.NAME] tables: slots is how many runs of the kinds naming the pool go on '
'at once (1: mutual exclusion). Kept by tickq.sync_pools; a pool gone from the registry is '
'deleted once no run holds its rows (slots 0 until then).';

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
'row of each pool its kind names with FOR UPDATE SKIP LOCKED; a report or an expired lease frees it.';
COMMENT ON COLUMN tickq.pool_slot.run_id IS 'The live run holding this pool slot, or null when free.';
COMMENT ON COLUMN tickq.pool_slot.leased_until IS 'When the lease of the run in this pool slot expires.';

ALTER TABLE tickq.job_kind
ADD COLUMN weight integer NOT NULL DEFAULT 1 CONSTRAINT kind_weight_positive CHECK (weight >= 1),
ADD COLUMN pools text[] NOT NULL DEFAULT '{}';
COMMENT ON COLUMN tickq.job_kind.weight IS
'How many of the global slots (settings.slots) each run of the kind takes: the registry''s weight '
'(default 1, at most slots); an agent''s kind takes [agents] weight.';
COMMENT ON COLUMN tickq.job_kind.pools IS
'The pools (tickq.pool) each run of the kind takes one slot of, besides its weight in the global '
'slots; sorted, no repeats.';
ALTER TABLE tickq.job_run
ADD COLUMN weight integer NOT NULL DEFAULT 1,
ADD COLUMN pools text[] NOT NULL DEFAULT '{}';
COMMENT ON COLUMN tickq.job_run.weight IS
'How many global slot rows the run held (its kind''s weight when claimed).';
COMMENT ON COLUMN tickq.job_run.pools IS
'The pools the run held one slot of (its kind''s pools when claimed).';
ALTER TABLE tickq.agent_settings
ADD COLUMN weight integer NOT NULL DEFAULT 1 CONSTRAINT agent_weight_positive CHECK (weight >= 1);
COMMENT ON COLUMN tickq.agent_settings.weight IS
'The weight of every agent''s kind ([agents] weight, default 1).';

-- claim_jobs asks whether any kind has a weight or pools at all: while none has, it keeps its
-- one-statement path. The partial index makes that question one probe of an empty index.
CREATE INDEX job_kind_weighted ON tickq.job_kind (name) WHERE weight > 1 OR pools <> '{}';

-- A weight or pools written behind the registry's back, or a pool row, forgets the digest like
-- the other registry columns (0024): the next sync does its whole work.
DROP TRIGGER kind_registry_written ON tickq.job_kind;
CREATE TRIGGER kind_registry_written
AFTER INSERT OR DELETE OR UPDATE OF name, registry, every, every_offset, at_times, on_days, days, months,
cron, timezone, timeout, priority, retries, enabled, irreversible, retired_at, weight, pools ON tickq.job_kind
FOR EACH STATEMENT EXECUTE FUNCTION tickq.forget_registry_digest();
CREATE TRIGGER pools_written AFTER INSERT OR DELETE OR UPDATE ON tickq.pool
FOR EACH STATEMENT EXECUTE FUNCTION tickq.forget_registry_digest();
CREATE TRIGGER pool_slots_written AFTER INSERT OR DELETE ON tickq.pool_slot
FOR EACH STATEMENT EXECUTE FUNCTION tickq.forget_registry_digest();
