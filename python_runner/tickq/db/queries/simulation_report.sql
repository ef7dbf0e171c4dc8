SELECT kind, priority::text AS lane, runs, longest_wait, starved, worst_due_at, behind
FROM tickq.simulation_report(%(until)s::timestamptz, %(start)s::timestamptz)
