SELECT kind, lane, runs, longest_wait, starved, worst_due_at, behind, in_window
FROM tickq.simulation_worst(%(worst)s::jsonb)
