-- Migration 0071_simulate_window_stops_stale.sql of the chain that sql/migrations/0100_baseline.sql
-- replaced, as it was: run, before the baseline is recorded, on a database of that chain that
-- lacks it (python_runner/tickq/db/baseline.py). A fresh database never runs it.
--
-- tickq.simulate_window may stop at the first stale wait (check --suggest's proposals: one that
-- fails need not be simulated to its end), a parameter before p_now: the old signature goes.
DROP PROCEDURE IF EXISTS tickq.simulate_window(timestamptz, jsonb, boolean, timestamptz);
