-- What `tickq check` decides about capacity: the verdict, the margin it used, and the lane to act
-- on when the total does not fit.
BEGIN;
SELECT plan(3);

-- three kinds on three slots
SELECT * FROM tickq.sync_registry('{
    "settings": {"slots": 3, "tick": 300, "capacity_margin": 0.25},
    "kinds": {
        "fast": {"command": ["x"], "every": 60, "timeout": 120, "priority": "urgent"},
        "quarter": {"command": ["x"], "every": 900, "timeout": 300},
        "long": {"command": ["x"], "every": 300, "timeout": 600, "priority": "low"}
    }}', '2026-06-01 10:00Z');
SELECT results_eq(
    $$SELECT fits, slot_share, budget, slots, margin, runs_per_tick, worst_lane, worst_lane_share
      FROM tickq.capacity_verdict_at('2026-06-01 10:00Z')$$,
    $$VALUES (true, 1.8000, 2.2500, 3, 0.25, 2.6666, NULL::text, NULL::numeric)$$,
    '1.80 of a 2.25 budget fits: no lane to blame');

-- the same kinds on two slots with a half margin
SELECT * FROM tickq.sync_registry('{
    "settings": {"slots": 2, "tick": 300, "capacity_margin": 0.5},
    "kinds": {
        "fast": {"command": ["x"], "every": 60, "timeout": 120, "priority": "urgent"},
        "quarter": {"command": ["x"], "every": 900, "timeout": 300},
        "long": {"command": ["x"], "every": 300, "timeout": 600, "priority": "low"}
    }}', '2026-06-01 10:00Z');
SELECT results_eq(
    $$SELECT fits, budget, margin, worst_lane, worst_lane_share FROM tickq.capacity_verdict_at('2026-06-01 10:00Z')$$,
    $$VALUES (false, 1.0000, 0.5, 'low', 1.0000)$$,
    'does not fit: the low lane takes the most (one whole slot)');

-- a tie between lanes names the more urgent one
-- two lanes of one slot each
SELECT * FROM tickq.sync_registry('{
    "settings": {"slots": 1, "tick": 300, "capacity_margin": 0.25, "housekeeping_every": 86400},
    "kinds": {
        "a": {"command": ["x"], "every": 300, "timeout": 300, "priority": "low"},
        "b": {"command": ["x"], "every": 300, "timeout": 300, "priority": "high"}
    }}', '2026-06-01 10:00Z');
SELECT is((SELECT worst_lane FROM tickq.capacity_verdict_at('2026-06-01 10:00Z')), 'high',
    'equal shares: the more urgent lane is named');
SELECT finish();
ROLLBACK;
