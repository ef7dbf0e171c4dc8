SELECT kind, priority::text AS lane, schedule, runs_per_tick, expected_duration, duration_source, slot_share
FROM tickq.capacity
