SELECT pool, slots, busy, free, holders, kinds, waiting
FROM tickq.pool_occupancy_at(coalesce(%(now)s::timestamptz, now()))
