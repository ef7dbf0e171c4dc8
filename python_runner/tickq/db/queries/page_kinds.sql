SELECT kind, priority::text AS priority, schedule, state, last_outcome::text AS last_outcome,
    last_finished_at, failure_streak, next_due_at, p50, p95, recent_failures
FROM tickq.report_kinds_at(%(hours)s::numeric, coalesce(%(now)s::timestamptz, now()))
