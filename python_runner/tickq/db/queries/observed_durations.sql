SELECT kind, extract(EPOCH FROM expected_duration)::float8
FROM tickq.capacity
WHERE duration_source <> 'timeout'
