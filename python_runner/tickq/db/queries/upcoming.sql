SELECT due_at, kind, priority::text AS priority, trigger::text AS trigger, schedule, held, paused_until,
    total
FROM tickq.upcoming_at(%(hours)s::numeric, %(limit)s, coalesce(%(now)s::timestamptz, now()))
