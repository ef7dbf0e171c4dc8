-- Python's datetime has no infinity: a pause until resumed comes back as NULL.
SELECT nullif(
    tickq.pause_kind(%(kind)s, coalesce(%(until)s::timestamptz, 'infinity'), %(reason)s, %(by)s),
    'infinity'
) AS paused_until
