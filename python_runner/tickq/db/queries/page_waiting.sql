SELECT kind, priority::text AS priority, due_at, waiting, stale
FROM tickq.report_waiting_at(coalesce(%(now)s::timestamptz, now()))
