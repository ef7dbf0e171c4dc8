-- tickq.simulation_repeat finds the longest stretch that repeats with one walk of each kind's
-- slots (tickq.simulation_repeats_until) instead of testing candidate instants one by one with
-- tickq.simulation_repeats, whose every test walked every kind's slots again: 176 ms of a
-- real_fix week's 728 ms of simulation (bench/README.md). The test goes with it.
DROP FUNCTION IF EXISTS tickq.simulation_repeats(timestamptz, timestamptz, interval, timestamptz);
