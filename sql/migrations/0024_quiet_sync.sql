-- A sync of the registry this queue last synced, whose rows nobody changed since, writes nothing:
-- tickq.queue_registry (one row) keeps the digest of the last sync that left the queue matching
-- its registry, and any write of what a sync writes (a kind's registry columns, the settings,
-- the [agents] caps, the slot rows) forgets it, so the next sync does its whole work and reports
-- the drift. Other columns of the row may be added the same way (IF NOT EXISTS) by other
-- migrations. ("only" is a reserved word, so the column is always quoted.)
CREATE TABLE IF NOT EXISTS tickq.queue_registry ("only" boolean PRIMARY KEY DEFAULT true CHECK ("only"));
ALTER TABLE tickq.queue_registry ADD COLUMN IF NOT EXISTS digest text;
COMMENT ON TABLE tickq.queue_registry IS
'One row: what the queue knows of the registry it was last synced with (digest: see its column).';
COMMENT ON COLUMN tickq.queue_registry.digest IS
'sha256 of the registry JSON (without its "dispatcher" key) and of the API checksum, written by '
'the last tickq.sync_registry that left the queue matching it; NULL once a kind''s registry '
'columns, the settings, the [agents] caps or the slot rows are written by anything else.';
INSERT INTO tickq.queue_registry ("only") VALUES (true) ON CONFLICT ("only") DO NOTHING;

CREATE FUNCTION tickq.forget_registry_digest() RETURNS trigger
LANGUAGE plpgsql
AS $$
BEGIN
    UPDATE tickq.queue_registry AS q SET digest = NULL WHERE q.digest IS NOT NULL;
    RETURN NULL;
END
$$;
COMMENT ON FUNCTION tickq.forget_registry_digest() IS
'Trigger: a statement wrote what tickq.sync_registry writes (a kind''s registry columns, the '
'settings, the [agents] caps, the slot rows), so the next sync cannot be skipped: forgets '
'tickq.queue_registry.digest.';

-- Statement triggers: a claim or a report writes none of these columns, so the hot path never
-- fires one.
CREATE TRIGGER kind_registry_written
AFTER INSERT OR DELETE OR UPDATE OF name, registry, every, every_offset, at_times, on_days, timezone,
timeout, priority, retries, enabled, irreversible, retired_at ON tickq.job_kind
FOR EACH STATEMENT EXECUTE FUNCTION tickq.forget_registry_digest();
CREATE TRIGGER kinds_truncated AFTER TRUNCATE ON tickq.job_kind
FOR EACH STATEMENT EXECUTE FUNCTION tickq.forget_registry_digest();
CREATE TRIGGER settings_written AFTER UPDATE ON tickq.settings
FOR EACH STATEMENT EXECUTE FUNCTION tickq.forget_registry_digest();
CREATE TRIGGER agent_settings_written AFTER UPDATE ON tickq.agent_settings
FOR EACH STATEMENT EXECUTE FUNCTION tickq.forget_registry_digest();
CREATE TRIGGER slots_written AFTER INSERT OR DELETE ON tickq.slot
FOR EACH STATEMENT EXECUTE FUNCTION tickq.forget_registry_digest();
