-- The simulator's clock through a whole window in one CALL (tickq.simulate_window): it commits
-- each part, so inside a transaction block it refuses before it changes anything; a window that
-- ends before it starts has no part, and only puts the queue in its steady state.
BEGIN;
SELECT plan(3);

-- an hourly kind
SELECT * FROM tickq.sync_registry('{
    "settings": {"slots": 1, "tick": 300, "stale_after": 900, "housekeeping_every": 86400},
    "kinds": {"a": {"command": ["x"], "every": 3600, "timeout": 600}}}', '2026-06-01 09:00Z');

SELECT throws_ok(
    $$CALL tickq.simulate_window('2026-06-01 12:00Z', NULL, true, false, '2026-06-01 10:00Z')$$,
    '2D000', NULL, 'it commits each part, so it is called outside a transaction block');

SELECT lives_ok(
    $$CALL tickq.simulate_window('2026-06-01 09:00Z', NULL, true, false, '2026-06-01 10:07Z')$$,
    'a window with no part commits nothing');
SELECT is((SELECT due_at FROM tickq.job_kind WHERE name = 'a'), '2026-06-01 11:00Z'::timestamptz,
    'and a steady start puts each kind at its next slot');

SELECT finish();
ROLLBACK;
