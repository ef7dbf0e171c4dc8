SELECT l.run_id, l.kind, l.leased_by, l.leased_until
FROM tickq.live_leases(%(run_ids)s) AS l
