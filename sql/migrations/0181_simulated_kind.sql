-- The simulator's report has one row shape, tickq.simulated_kind: tickq.simulation_report and
-- tickq.simulate (which reports through it) each declared the same seven columns. CREATE OR
-- REPLACE cannot change a return type: the API files drop both first (00_api_begin.sql) and
-- 07_simulate.sql creates them again.
CREATE TYPE tickq.simulated_kind AS (
    kind text,
    priority tickq.priority,
    runs integer,
    longest_wait interval,
    starved boolean,
    worst_due_at timestamptz,
    behind text []
);
COMMENT ON TYPE tickq.simulated_kind IS
'One kind in the simulator''s report: its lane, runs, longest wait from due to claim (NULL when it '
'was never due), starved, when that wait began, and what a starved kind waited behind.';
