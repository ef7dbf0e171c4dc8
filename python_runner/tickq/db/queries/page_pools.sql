SELECT pool, slots, busy, free, peak, kinds, waiting, holders, drawn, steps
FROM tickq.report_pools_at(%(hours)s::numeric, %(pool_steps)s, %(pools_drawn)s, %(holders)s,
    coalesce(%(now)s::timestamptz, now()))
