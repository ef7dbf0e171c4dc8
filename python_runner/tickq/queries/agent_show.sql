SELECT a.id, a.name, a.schedule, a.state, a.max_turns, extract(EPOCH FROM a.timeout)::integer AS timeout_s,
    a.owner, a.tools, a.next_due_at, a.last_outcome::text AS last_outcome, a.last_finished_at, g.prompt, g.timezone
FROM tickq.agents_at() AS a
INNER JOIN tickq.agent AS g ON a.id = g.id
WHERE a.name = %(name)s
