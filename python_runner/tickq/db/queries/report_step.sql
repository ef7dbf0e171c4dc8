SELECT tickq.report_step(
    %(run_id)s, %(dispatcher)s, %(n)s, %(name)s, %(outcome)s::tickq.outcome, %(exit_code)s,
    %(output_tail)s, make_interval(secs => %(duration)s)
)
