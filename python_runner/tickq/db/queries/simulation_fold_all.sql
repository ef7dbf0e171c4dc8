-- The reports of windows simulated beside each other (a JSON array of what simulation_merge.sql
-- gave for each, in window order), folded in that order (tickq.simulation_fold) in one
-- statement, as text for simulation_worst.sql.
WITH RECURSIVE given AS (
    SELECT g.report, g.n FROM jsonb_array_elements(%(reports)s::jsonb) WITH ORDINALITY AS g (report, n)
),
folded (n, worst) AS (
    SELECT 0::bigint, NULL::jsonb
    UNION ALL
    SELECT f.n + 1, tickq.simulation_fold(f.worst, g.report)
    FROM folded AS f INNER JOIN given AS g ON g.n = f.n + 1
)
SELECT f.worst::text AS worst FROM folded AS f ORDER BY f.n DESC LIMIT 1
