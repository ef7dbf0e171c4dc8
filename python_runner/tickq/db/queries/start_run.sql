SELECT tickq.start_run(%(run_id)s, %(dispatcher)s)
