SELECT tickq.simulation_merge(%(worst)s::jsonb, %(window)s, %(until)s::timestamptz, %(start)s::timestamptz)
    AS worst
