SELECT host, last_tick_at, last_claim_at, runs
FROM tickq.report_dispatchers_at(%(hours)s::numeric, coalesce(%(now)s::timestamptz, now()))
