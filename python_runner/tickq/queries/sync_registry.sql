SELECT kind, field, stored_value, registry_value
FROM tickq.sync_registry(%(registry)s::jsonb)
