SELECT kind, retired_at, runs, last_run_at FROM tickq.retired_kinds_at()
