SELECT kind, priority::text, schedule, runs_per_tick, expected_duration, duration_source, slot_share
FROM tickq.capacity
