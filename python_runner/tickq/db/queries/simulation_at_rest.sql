SELECT tickq.simulation_at_rest(%(at)s::timestamptz) AS at_rest
