SELECT kind, problem, detail FROM tickq.health_problems()
