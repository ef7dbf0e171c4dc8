-- tickq.simulation_mark where a copy ended (p_copied): the state, its digest, the next run's id
-- and the idle time as at any part, but neither the digest without slot row numbers nor the
-- runs by kind (NULL), which simulate_window takes from the copy: they cost half as much as the
-- state.
BEGIN;
SELECT plan(4);

-- one slot; a (hourly at :00) holds it 20 minutes, b (hourly at :10) 5 minutes
SELECT * FROM tickq.sync_registry('{
    "settings": {"slots": 1, "tick": 300, "stale_after": 900, "housekeeping_every": 86400},
    "kinds": {
        "a": {"command": ["x"], "every": 3600, "timeout": 1200},
        "b": {"command": ["x"], "every": 3600, "offset": 600, "timeout": 300}
    }}', '2026-06-01 09:00Z');
SELECT tickq.simulation_start('2026-06-01 10:00Z');
SELECT tickq.simulate_events('2026-06-01 10:14:59.999999Z', NULL, '2026-06-01 10:00Z');

CREATE TEMP TABLE marks AS
SELECT false AS copied, m.* FROM tickq.simulation_mark('2026-06-01 10:15Z') AS m
UNION ALL
SELECT true, m.* FROM tickq.simulation_mark('2026-06-01 10:15Z', true) AS m;

SELECT is((SELECT m.ids FROM marks AS m WHERE NOT m.copied),
    (SELECT jsonb_build_object('a', k.run_id) FROM tickq.job_kind AS k WHERE k.name = 'a' AND k.run_id IS NOT NULL),
    'a''s run goes on at 10:15');
SELECT ok((SELECT m.unlabelled IS NOT NULL FROM marks AS m WHERE NOT m.copied), 'a mark has its digest without rows');
SELECT results_eq('SELECT m.state, m.digest, m.first_id, m.idle_until FROM marks AS m WHERE m.copied',
    'SELECT m.state, m.digest, m.first_id, m.idle_until FROM marks AS m WHERE NOT m.copied',
    'where a copy ended: the same state, digest, next id and idle time');
SELECT ok((SELECT m.unlabelled IS NULL AND m.ids IS NULL FROM marks AS m WHERE m.copied),
    'but neither the digest without slot row numbers nor the runs by kind');

SELECT * FROM finish();
ROLLBACK;
