SELECT t.turn, t.recorded_at, t.entry
FROM tickq.agent_transcript(%(run_id)s) AS t
INNER JOIN tickq.job_run AS r ON r.id = %(run_id)s AND r.kind = 'agent.' || %(name)s
