-- The calendar columns (days, months, cron: migration 0026) are written by a sync like the other
-- schedule columns, so a write of them by anything else must forget the registry digest too
-- (migration 0024): the next sync then does its whole work and reports the drift.
DROP TRIGGER kind_registry_written ON tickq.job_kind;
CREATE TRIGGER kind_registry_written
AFTER INSERT OR DELETE OR UPDATE OF name, registry, every, every_offset, at_times, on_days, days, months,
cron, timezone, timeout, priority, retries, enabled, irreversible, retired_at ON tickq.job_kind
FOR EACH STATEMENT EXECUTE FUNCTION tickq.forget_registry_digest();
