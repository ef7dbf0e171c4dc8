CALL tickq.simulate_window(%(until)s::timestamptz, %(durations)s::jsonb, %(steady)s, %(stop)s, %(start)s::timestamptz)
