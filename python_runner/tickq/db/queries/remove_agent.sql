SELECT tickq.remove_agent(%(name)s) AS id
