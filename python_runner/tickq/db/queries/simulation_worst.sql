SELECT w.kind, w.lane, w.runs, w.longest_wait, w.starved, w.worst_due_at, w.behind, w.in_window,
    tickq.month_end_at(coalesce(k.timezone, s.timezone), w.worst_due_at) AS month_end
FROM tickq.simulation_worst(%(worst)s::jsonb) AS w
LEFT JOIN tickq.job_kind AS k ON w.kind = k.name
CROSS JOIN tickq.settings AS s
