-- The drift comes back classified by the database (registry_edit, changed, unit).
SELECT d.kind, d.field, d.stored_value, d.registry_value, d.registry_edit, d.changed, d.unit
FROM tickq.sync_registry(%(registry)s::jsonb) AS d
