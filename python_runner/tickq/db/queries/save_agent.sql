SELECT id, name FROM tickq.save_agent(%(name)s, %(fields)s::jsonb, %(create)s)
