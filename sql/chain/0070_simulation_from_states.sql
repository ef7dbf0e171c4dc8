-- Migration 0070_simulation_from_states.sql of the chain that sql/migrations/0100_baseline.sql
-- replaced, as it was: run, before the baseline is recorded, on a database of that chain that
-- lacks it (python_runner/tickq/db/baseline.py). A fresh database never runs it.
--
-- The simulator copies a stretch that repeats from wherever its state (what claims and reports
-- read, relative to the instant) is the state of a day or a week before, not only where the
-- clock stands at rest (tickq.simulate_window, sql/api/18_simulation_state.sql): what stood at rest
-- and what copied from there go.
DROP FUNCTION IF EXISTS tickq.simulation_at_rest(timestamptz);
DROP FUNCTION IF EXISTS tickq.simulation_repeat(timestamptz[], timestamptz, timestamptz);
