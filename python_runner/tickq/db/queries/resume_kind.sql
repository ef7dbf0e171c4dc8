SELECT tickq.resume_kind(%(kind)s) IS NOT NULL AS was_paused
