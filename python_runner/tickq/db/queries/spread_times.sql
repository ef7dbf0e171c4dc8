SELECT kind, at_times
FROM tickq.spread_times(%(durations)s::jsonb)
