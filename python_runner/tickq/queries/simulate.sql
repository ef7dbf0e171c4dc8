SELECT kind, priority::text, runs, longest_wait, starved
FROM tickq.simulate(%(hours)s::numeric, %(durations)s::jsonb)
