SELECT tickq.simulation_fold(%(worst)s::jsonb, %(more)s::jsonb) AS worst
