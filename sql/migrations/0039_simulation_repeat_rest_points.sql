-- tickq.simulation_repeat returns the instants its copy stands at rest, not only the last one,
-- so that tickq.simulate_window can copy the day after a copied day too (bench/README.md:
-- a real_fix week's Saturday was simulated whole). CREATE OR REPLACE cannot change a
-- function's return type, so the API file creates it anew.
DROP FUNCTION IF EXISTS tickq.simulation_repeat(timestamptz[], timestamptz, timestamptz);
