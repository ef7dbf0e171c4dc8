WITH lateness AS MATERIALIZED (SELECT * FROM tickq.tick_lateness(%(registry)s::jsonb))
SELECT l.kind, l.timezone, l.tick, l.late_by, l.slot_time, l.runs_time,
    tickq.on_time_tick(extract(EPOCH FROM l.tick)::integer, ARRAY(SELECT x.grain FROM lateness AS x))
        AS on_time
FROM lateness AS l
WHERE l.late_by > '0'::interval
ORDER BY l.kind
