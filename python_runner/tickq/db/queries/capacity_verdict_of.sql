SELECT fits, slot_share, budget, slots, margin, runs_per_tick, worst_lane, worst_lane_share
FROM tickq.capacity_verdict_of(%(kinds)s::jsonb)
