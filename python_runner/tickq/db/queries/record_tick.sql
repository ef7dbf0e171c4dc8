SELECT tickq.record_tick(%(dispatcher)s, %(host)s)
