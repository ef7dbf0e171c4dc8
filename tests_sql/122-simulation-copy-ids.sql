-- The run ids of the simulator's copies (sql/api/18_simulation_state.sql, 19_simulate_window.sql)
-- in a scratch database that simulated before: simulation_start lets go of the earlier window's
-- runs but not of the ids they took, so the next run's id is past every run left. The id
-- tickq.simulation_mark gives for a part must be the one its first run gets, and a stretch
-- copied from a part where no run was claimed yet takes as many ids as it has runs: offsets
-- counted from a smaller id grew the ids with every copy and every window, until a month-end
-- registry's copies went past bigint.
BEGIN;
SELECT plan(5);

-- one slot; a (hourly at :00) holds it 20 minutes, b (hourly at :10) 5 minutes
SELECT * FROM tickq.sync_registry('{
    "settings": {"slots": 1, "tick": 300, "stale_after": 900, "housekeeping_every": 86400},
    "kinds": {
        "a": {"command": ["x"], "every": 3600, "timeout": 1200},
        "b": {"command": ["x"], "every": 3600, "offset": 600, "timeout": 300}
    }}', '2026-06-01 09:00Z');

-- An earlier window in the same database: its runs are let go of by the next simulation_start.
SELECT tickq.simulation_start('2026-06-01 10:00Z');
SELECT tickq.simulate_events('2026-06-01 11:59:59.999999Z', NULL, '2026-06-01 10:00Z');
SELECT tickq.simulation_start('2026-06-01 10:00Z');
SELECT is((SELECT count(*) FROM tickq.job_run WHERE dispatcher = 'simulator'), 0::bigint,
    'the earlier window''s runs are gone');

CREATE TEMP TABLE mark AS
SELECT timestamptz '2026-06-01 10:00Z' AS at, m.* FROM tickq.simulation_mark('2026-06-01 10:00Z') AS m;
SELECT tickq.simulate_events('2026-06-01 10:59:59.999999Z', NULL, '2026-06-01 10:00Z');
SELECT is((SELECT min(r.id) FROM tickq.job_run AS r WHERE r.dispatcher = 'simulator'),
    (SELECT m.first_id FROM mark AS m WHERE m.at = '2026-06-01 10:00Z'),
    'the id simulation_mark gives at 10:00 is the one the first run of the window gets');

INSERT INTO mark SELECT '2026-06-01 11:00Z', m.* FROM tickq.simulation_mark('2026-06-01 11:00Z') AS m;
SELECT is((SELECT m.state FROM mark AS m WHERE m.at = '2026-06-01 11:00Z'),
    (SELECT m.state FROM mark AS m WHERE m.at = '2026-06-01 10:00Z'), 'at rest at 10:00 and at 11:00');

-- The hour from 10:00 copied to 11:00, where the clock stands.
SELECT tickq.simulation_copy('2026-06-01 10:00Z', '2026-06-01 11:00Z', '1 hour', l.state, f.ids, l.ids, l.ids,
    f.first_id, l.first_id, l.first_id)
FROM mark AS f, mark AS l WHERE f.at = '2026-06-01 10:00Z' AND l.at = '2026-06-01 11:00Z';
SELECT is(
    (SELECT array_agg(r.id - (SELECT m.first_id FROM mark AS m WHERE m.at = '2026-06-01 11:00Z') ORDER BY r.id)
        FROM tickq.job_run AS r WHERE r.claimed_at >= '2026-06-01 11:00Z'),
    ARRAY[0, 1]::bigint[], 'the hour''s two runs copied take the two ids after the hour''s own');
SELECT tickq.simulate_events('2026-06-01 12:59:59.999999Z', NULL, '2026-06-01 12:00Z');
SELECT is(
    (SELECT array_agg(r.id - (SELECT m.first_id FROM mark AS m WHERE m.at = '2026-06-01 11:00Z') ORDER BY r.id)
        FROM tickq.job_run AS r WHERE r.claimed_at >= '2026-06-01 12:00Z'),
    ARRAY[2, 3]::bigint[], 'and the clock goes on with the two after them');

SELECT * FROM finish();
ROLLBACK;
