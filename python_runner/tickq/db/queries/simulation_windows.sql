SELECT starts_at, hours, period, warm_up, dst_zone
FROM tickq.simulation_windows()
