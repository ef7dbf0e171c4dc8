SELECT starts_at, hours, period, warm_up, dst_zone, month_end
FROM tickq.simulation_windows(coalesce(%(now)s::timestamptz, now()))
