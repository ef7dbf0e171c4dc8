SELECT run_id, run_trigger::text AS run_trigger, attempt, claimed_at, outcome::text AS outcome,
    extract(EPOCH FROM duration)::double precision AS duration_s, turns, output_tail
FROM tickq.agent_runs(%(name)s, %(limit)s)
