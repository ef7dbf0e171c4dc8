SELECT w.kind, w.lane, w.runs, w.longest_wait, w.starved, w.worst_due_at, w.behind, w.in_window,
    tickq.month_end_at(coalesce(k.timezone, s.timezone), w.worst_due_at) AS month_end
FROM tickq.simulation_worst(%(worst)s::jsonb) WITH ORDINALITY
    AS w (kind, lane, runs, longest_wait, starved, worst_due_at, behind, in_window, n)
LEFT JOIN tickq.job_kind AS k ON w.kind = k.name
CROSS JOIN tickq.settings AS s
ORDER BY w.n
