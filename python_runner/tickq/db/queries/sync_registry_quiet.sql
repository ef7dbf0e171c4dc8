SELECT count(*) AS drift FROM tickq.sync_registry(%(registry)s::jsonb)
