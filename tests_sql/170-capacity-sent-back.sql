-- `tickq check` reads the kinds' capacity rows once and sends them back (numbers as strings)
-- for the lanes and the verdict (tickq.capacity_lanes, tickq.capacity_verdict_of): what it
-- sends must give what capacity_total_at and capacity_verdict_at give from the rows themselves.
BEGIN;
SELECT plan(4);

-- the same kinds on two slots with a half margin: does not fit, the low lane takes the most
SELECT * FROM tickq.sync_registry('{
    "settings": {"slots": 2, "tick": 300, "capacity_margin": 0.5},
    "kinds": {
        "fast": {"command": ["x"], "every": 60, "timeout": 120, "priority": "urgent"},
        "quarter": {"command": ["x"], "every": 900, "timeout": 300},
        "long": {"command": ["x"], "every": 300, "timeout": 600, "priority": "low"},
        "monthly": {"command": ["x"], "cron": "15 3 1,15 * *", "timeout": 600, "priority": "high"}
    }}', '2026-06-01 10:00Z');
CREATE TEMP TABLE sent AS
SELECT jsonb_agg(jsonb_build_object('priority', c.priority::text, 'runs_per_tick', c.runs_per_tick::text,
    'slot_share', c.slot_share::text)) AS kinds
FROM tickq.capacity_at('2026-06-01 10:00Z') AS c;

SELECT results_eq(
    $$SELECT l.* FROM sent AS s CROSS JOIN LATERAL tickq.capacity_lanes(s.kinds) AS l$$,
    $$SELECT * FROM tickq.capacity_total_at('2026-06-01 10:00Z')$$,
    'the lanes of the rows sent back as text are capacity_total_at''s');
SELECT results_eq(
    $$SELECT v.* FROM sent AS s CROSS JOIN LATERAL tickq.capacity_verdict_of(s.kinds) AS v$$,
    $$SELECT * FROM tickq.capacity_verdict_at('2026-06-01 10:00Z')$$,
    'the verdict of the rows sent back as text is capacity_verdict_at''s');
SELECT results_eq(
    $$SELECT fits, budget, worst_lane, worst_lane_share FROM sent AS s
      CROSS JOIN LATERAL tickq.capacity_verdict_of(s.kinds) AS v$$,
    $$VALUES (false, 1.0000, 'low', 1.0000)$$,
    'and it is the verdict: does not fit, the low lane to act on');
SELECT results_eq(
    $$SELECT lane, kinds, runs_per_tick, slot_share FROM tickq.capacity_lanes('[]')$$,
    $$VALUES ('total', 0, 0::numeric, 0::numeric)$$,
    'no kind: a total of nothing');

SELECT * FROM finish();
ROLLBACK;
