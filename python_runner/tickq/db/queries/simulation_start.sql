SELECT tickq.simulation_start(%(start)s::timestamptz)
