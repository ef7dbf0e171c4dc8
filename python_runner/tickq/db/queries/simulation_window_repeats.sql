-- Whether a window `shift` seconds after the one from `start` through `until` (simulated before
-- in this database) repeats it, its report then that one's shifted (tickq.simulation_window_repeats).
SELECT tickq.simulation_window_repeats(%(start)s::timestamptz, %(until)s::timestamptz,
    make_interval(secs => %(shift)s::double precision)) AS repeats
