SELECT id, name, kind, prompt, max_turns, extract(EPOCH FROM timeout)::integer AS timeout_s, owner, tools, timezone
FROM tickq.load_agent(%(agent_id)s)
