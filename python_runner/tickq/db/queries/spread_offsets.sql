SELECT kind, offset_seconds
FROM tickq.spread_offsets(%(durations)s::jsonb)
