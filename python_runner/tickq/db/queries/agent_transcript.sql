SELECT turn, recorded_at, entry
FROM tickq.agent_run_transcript(%(name)s, %(run_id)s)
