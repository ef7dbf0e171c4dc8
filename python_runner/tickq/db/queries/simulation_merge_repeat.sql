-- simulation_merge.sql for a window that repeats an earlier one `shift` seconds later: that
-- window's report shifted (tickq.simulation_merge_repeat).
SELECT tickq.simulation_merge_repeat(%(worst)s::jsonb, %(window)s, %(report)s::jsonb,
    make_interval(secs => %(shift)s::double precision)) AS worst
