SELECT tickq.simulate_events(%(until)s::timestamptz, %(durations)s::jsonb, %(start)s::timestamptz)
