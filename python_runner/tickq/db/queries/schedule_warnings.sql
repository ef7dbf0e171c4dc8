SELECT kind, key, warning
FROM tickq.schedule_warnings(%(registry)s::jsonb)
