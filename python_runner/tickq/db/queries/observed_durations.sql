SELECT kind, extract(EPOCH FROM expected_duration)::float8 AS seconds, expected_duration AS expected,
    duration_source AS source
FROM tickq.capacity
WHERE duration_source <> 'timeout'
