-- An agent copied into a scratch queue (tickq simulate), within that queue's caps.
SELECT (tickq.save_agent(%(name)s, %(fields)s::jsonb || jsonb_build_object(
    'timeout', least((%(fields)s::jsonb ->> 'timeout')::numeric, extract(EPOCH FROM s.max_timeout)),
    'max_turns', least((%(fields)s::jsonb ->> 'max_turns')::integer, s.max_turns)), NULL)).id
FROM tickq.agent_settings AS s
