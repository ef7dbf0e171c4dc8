SELECT tickq.record_agent_turn(%(run_id)s, %(agent_id)s, %(turn)s, %(entry)s::jsonb)
