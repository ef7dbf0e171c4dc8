-- tickq.simulate_window may stop at the first stale wait (check --suggest's proposals: one that
-- fails need not be simulated to its end), a parameter before p_now: the old signature goes.
DROP PROCEDURE IF EXISTS tickq.simulate_window(timestamptz, jsonb, boolean, timestamptz);
