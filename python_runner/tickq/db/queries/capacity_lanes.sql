SELECT lane, kinds, runs_per_tick, slot_share, slots, budget, fits
FROM tickq.capacity_lanes(%(kinds)s::jsonb)
