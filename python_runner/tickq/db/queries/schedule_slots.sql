SELECT at, local_at, timezone, schedule
FROM tickq.schedule_slots(%(name)s, %(entry)s::jsonb, %(timezone)s, %(count)s, coalesce(%(now)s::timestamptz, now()))
