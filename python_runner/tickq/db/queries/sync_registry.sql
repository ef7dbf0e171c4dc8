-- The drift comes back classified by the database (registry_edit, changed, unit).
SELECT d.kind, d.field, d.stored_value, d.registry_value, d.registry_edit, d.changed, d.unit
-- now: the time the sync happens at, the clock's unless a simulation deploys the registry at another.
FROM tickq.sync_registry(%(registry)s::jsonb, coalesce(%(now)s::timestamptz, now())) AS d
