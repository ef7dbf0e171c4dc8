SELECT id, name FROM tickq.resume_agent(%(name)s)
