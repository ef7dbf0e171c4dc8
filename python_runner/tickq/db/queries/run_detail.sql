SELECT run_id, kind, run_trigger::text AS run_trigger, attempt, due_at, claimed_at, started_at,
    finished_at, duration, outcome::text AS outcome, exit_code, slots_merged, dispatcher,
    output_tail, slot_at, first_slot_at, slots_covered, weight, pools
FROM tickq.run_detail(%(run_id)s, coalesce(%(now)s::timestamptz, now()))
