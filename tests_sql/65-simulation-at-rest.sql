-- Where the simulator's clock stands as tickq.simulation_start would put it
-- (tickq.simulation_at_rest), so a stretch started there in another scratch database goes on
-- exactly: not while a run holds a slot, nor while a kind waits past its slot, nor before a
-- kind's next slot was moved on by a run; again once everything is back at its next slot.
BEGIN;
SELECT plan(6);

-- one slot; a (high, hourly at :00) holds it 20 minutes, b (low, hourly at :10) waits behind it
-- two hourly kinds on one slot
SELECT * FROM tickq.sync_registry('{
    "settings": {"slots": 1, "tick": 300, "stale_after": 900, "housekeeping_every": 86400},
    "kinds": {
        "a": {"command": ["x"], "every": 3600, "timeout": 1200, "priority": "high"},
        "b": {"command": ["x"], "every": 3600, "offset": 600, "timeout": 300, "priority": "low"}
    }}', '2026-06-01 09:00Z');

SELECT tickq.simulation_start('2026-06-01 10:00Z');
SELECT ok(tickq.simulation_at_rest('2026-06-01 10:00Z'), 'at rest where simulation_start put it');
SELECT ok(NOT tickq.simulation_at_rest('2026-06-01 10:05Z'),
    'not a moment later: housekeeping and a are due at 10:00 and unclaimed, no longer at their next slot');

SELECT tickq.simulate_events('2026-06-01 10:14:59.999999Z', NULL, '2026-06-01 10:00Z');
SELECT ok(NOT tickq.simulation_at_rest('2026-06-01 10:15Z'), 'not while a holds the slot (10:00 to 10:20)');

SELECT tickq.simulate_events('2026-06-01 10:24:59.999999Z', NULL, '2026-06-01 10:15Z');
SELECT ok(NOT tickq.simulation_at_rest('2026-06-01 10:25Z'),
    'not while b, due at 10:10, waits (claimed at 10:20, it holds the slot until 10:25)');

SELECT tickq.simulate_events('2026-06-01 10:44:59.999999Z', NULL, '2026-06-01 10:25Z');
SELECT ok(tickq.simulation_at_rest('2026-06-01 10:45Z'),
    'at rest again once every run ended and each kind waits for its next slot');
SELECT ok(NOT tickq.simulation_at_rest('2026-06-01 11:05Z'),
    'but not as seen from after a slot (a at 11:00) it has not reached');

SELECT finish();
ROLLBACK;
