SELECT kind, priority::text AS priority, bar_start, bar_end, outcome::text AS outcome, runs,
    first_run_id, wait_start, longest_wait, stale_at, longest_run
FROM tickq.report_timeline_at(%(hours)s::numeric, coalesce(%(now)s::timestamptz, now()))
