SELECT a.id, extract(EPOCH FROM a.timeout)::integer AS timeout_s
FROM tickq.load_agent(tickq.agent_for_kind(%(kind)s)) AS a
