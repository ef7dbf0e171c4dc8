SELECT run_at, local_time, timezone FROM tickq.agent_next_runs(%(name)s, %(count)s)
