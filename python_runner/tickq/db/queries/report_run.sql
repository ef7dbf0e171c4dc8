SELECT run_id, kind, outcome::text, failure_streak, next_due_at, next_trigger::text
FROM tickq.report_run(
    %(run_id)s, %(dispatcher)s, %(outcome)s::tickq.outcome, %(exit_code)s, %(output_tail)s,
    make_interval(secs => %(duration)s)
)
