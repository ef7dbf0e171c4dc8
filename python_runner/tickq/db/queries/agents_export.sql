SELECT name, fields FROM tickq.agents_export()
