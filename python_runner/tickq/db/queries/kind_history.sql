SELECT run_id, run_trigger::text AS run_trigger, attempt, due_at, claimed_at, started_at,
    finished_at, waited, duration, outcome::text AS outcome, exit_code, slots_merged, dispatcher,
    slot_at, first_slot_at, slots_covered, weight, pools
FROM tickq.kind_history(%(kind)s, %(limit)s, coalesce(%(now)s::timestamptz, now()))
