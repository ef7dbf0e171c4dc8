-- Each kind's month end in the zone its slots are read in: a calendar or cron kind's own, an
-- `every` kind's (whose job_kind.timezone is UTC, as its cadence knows no zone) the registry's.
SELECT w.kind, w.lane, w.runs, w.longest_wait, w.starved, w.worst_due_at, w.behind, w.in_window,
    tickq.month_end_at(CASE WHEN k.every IS NULL THEN k.timezone ELSE s.timezone END, w.worst_due_at)
        AS month_end
FROM tickq.simulation_worst(%(worst)s::jsonb) WITH ORDINALITY
    AS w (kind, lane, runs, longest_wait, starved, worst_due_at, behind, in_window, n)
LEFT JOIN tickq.job_kind AS k ON w.kind = k.name
CROSS JOIN tickq.settings AS s
ORDER BY w.n
