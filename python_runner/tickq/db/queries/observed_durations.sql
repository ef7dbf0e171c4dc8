SELECT kind, extract(EPOCH FROM expected_duration)::float8 AS seconds
FROM tickq.capacity
WHERE duration_source <> 'timeout'
