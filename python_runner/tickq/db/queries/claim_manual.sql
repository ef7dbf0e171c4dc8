SELECT run_id, kind, attempt, leased_until, run_trigger::text,
    slot_at, first_slot_at, slots_covered,
    extract(EPOCH FROM leased_until - now())::float8 AS lease_s
FROM tickq.claim_manual(%(kind)s, %(dispatcher)s, %(run_by)s)
