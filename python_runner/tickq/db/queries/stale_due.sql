SELECT kind, priority::text, due_at, waiting FROM tickq.stale_due
