SELECT id, name, schedule, state, max_turns, extract(EPOCH FROM timeout)::integer AS timeout_s, owner, tools,
    next_due_at, last_outcome::text AS last_outcome, last_finished_at
FROM tickq.agents_at()
