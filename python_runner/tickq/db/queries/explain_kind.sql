SELECT tickq.explain_kind(%(kind)s, coalesce(%(now)s::timestamptz, now())) AS doc
