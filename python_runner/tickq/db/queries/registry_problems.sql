SELECT kind, key, problem
FROM tickq.registry_problems(%(registry)s::jsonb)
