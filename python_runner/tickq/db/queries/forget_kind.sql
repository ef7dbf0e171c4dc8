SELECT tickq.forget_kind(%(kind)s) AS runs
