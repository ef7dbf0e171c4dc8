SELECT tickq.chain_start(%(run_id)s, %(dispatcher)s)
