SELECT run_id, kind, outcome::text, verdict
FROM tickq.report_late_run(
    %(run_id)s, %(dispatcher)s, %(outcome)s::tickq.outcome, %(exit_code)s, %(output_tail)s,
    make_interval(secs => %(duration)s)
)
