SELECT slots, busy, free, holders
FROM tickq.slot_occupancy_at(coalesce(%(now)s::timestamptz, now()))
