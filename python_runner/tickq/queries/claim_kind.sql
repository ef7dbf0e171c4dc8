SELECT run_id, kind, attempt, leased_until, run_trigger::text
FROM tickq.claim_manual(%(kind)s, %(dispatcher)s, %(run_by)s)
