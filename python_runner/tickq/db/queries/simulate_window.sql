CALL tickq.simulate_window(%(until)s::timestamptz, %(durations)s::jsonb, %(steady)s, %(start)s::timestamptz)
