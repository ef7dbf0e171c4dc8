SELECT id, name, schedule, state, max_turns, timeout_s, owner, tools, next_due_at,
    last_outcome::text AS last_outcome, last_finished_at, prompt, timezone
FROM tickq.agent_detail(%(name)s)
