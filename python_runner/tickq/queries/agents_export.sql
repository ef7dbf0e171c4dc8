SELECT a.name, jsonb_strip_nulls(jsonb_build_object(
    'prompt', a.prompt,
    'every', extract(EPOCH FROM a.every)::bigint,
    'at', (SELECT jsonb_agg(to_char(t.at_time, 'HH24:MI')) FROM unnest(a.at_times) AS t (at_time)),
    'on', (SELECT jsonb_agg((ARRAY['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'])[d.day])
        FROM unnest(a.on_days) AS d (day)),
    'timezone', CASE WHEN a.at_times IS NOT NULL THEN a.timezone END,
    'max_turns', a.max_turns,
    'timeout', extract(EPOCH FROM a.timeout)::bigint,
    'paused', a.paused
)) AS fields
FROM tickq.agent AS a
ORDER BY a.name
