SELECT starts_at, hours, period, warm_up, dst_zone
FROM tickq.simulation_replay_window(%(hours)s::numeric)
