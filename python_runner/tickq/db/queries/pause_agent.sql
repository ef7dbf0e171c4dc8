SELECT id, name FROM tickq.pause_agent(%(name)s)
