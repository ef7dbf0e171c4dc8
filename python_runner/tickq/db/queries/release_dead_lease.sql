SELECT tickq.release_dead_lease(%(run_id)s, %(dispatcher)s) AS released
