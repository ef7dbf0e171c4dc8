SELECT run_id, kind, attempt, leased_until, run_trigger::text
FROM tickq.claim_jobs(%(limit)s, %(dispatcher)s)
