SELECT step_start, in_use
FROM tickq.report_slots_at(%(hours)s::numeric, %(steps)s, coalesce(%(now)s::timestamptz, now()))
