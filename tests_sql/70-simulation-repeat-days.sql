-- tickq.simulation_repeat copies a stretch from the nearest earlier day it repeats: the day
-- before, else two days before, and so on. The day after a weekly kind's day lacks its slot,
-- so that stretch does not repeat the day before, but does the day before that.
BEGIN;
SELECT plan(5);

-- a kind every five minutes and one on Mondays at noon (UTC)
SELECT * FROM tickq.sync_registry('{
    "settings": {"slots": 2, "tick": 300, "stale_after": 900, "housekeeping_every": 86400},
    "kinds": {
        "five": {"command": ["x"], "every": 300, "timeout": 60},
        "monday": {"command": ["x"], "at": ["12:00"], "on": ["mon"], "timeout": 600}
    }}', '2026-06-06 00:00Z');

-- The clock from Sunday 2026-06-07 00:00 to Tuesday noon, part by part as simulate_window moves
-- it, keeping the instants where it stood at rest.
CREATE TEMP TABLE rests (at timestamptz PRIMARY KEY);
DO $$
DECLARE
    v_at timestamptz := '2026-06-07 00:00Z';
BEGIN
    PERFORM tickq.simulation_start(v_at);
    WHILE v_at < '2026-06-09 12:00Z' LOOP
        IF tickq.simulation_at_rest(v_at) THEN
            INSERT INTO rests VALUES (v_at);
        END IF;
        PERFORM tickq.simulate_events(v_at + interval '15 minutes' - interval '1 microsecond', NULL, v_at);
        v_at := v_at + interval '15 minutes';
    END LOOP;
END
$$;
SELECT ok(tickq.simulation_at_rest('2026-06-09 12:00Z'), 'Tuesday noon: the clock stands at rest');
SELECT is(tickq.simulation_repeats_until('2026-06-08 12:00Z', '2026-06-09 12:00Z', '24 hours'),
    '2026-06-08 12:00Z'::timestamptz, 'from Monday noon nothing repeats a day later: Tuesday has no Monday run');

CREATE TEMP TABLE sunday AS
SELECT r.kind, r.claimed_at + interval '2 days' AS claimed_at, r.finished_at + interval '2 days' AS finished_at
FROM tickq.job_run AS r
WHERE r.dispatcher = 'simulator' AND r.claimed_at >= '2026-06-07 12:00Z' AND r.claimed_at < '2026-06-07 13:00Z';
SELECT is(tickq.simulation_repeat(
        (SELECT array_agg(r.at ORDER BY r.at) FROM rests AS r) || '2026-06-09 12:00Z'::timestamptz,
        '2026-06-09 13:00Z', '2026-06-09 12:00Z'),
    (SELECT array_agg(g.at ORDER BY g.at)
        FROM generate_series('2026-06-09 12:15Z'::timestamptz, '2026-06-09 13:00Z', '15 minutes') AS g (at)),
    'so Sunday''s noon to one is copied two days later, and the clock stands at rest at one');
SELECT set_eq($$SELECT r.kind, r.claimed_at, r.finished_at FROM tickq.job_run AS r
        WHERE r.claimed_at >= '2026-06-09 12:00Z' AND r.claimed_at < '2026-06-09 13:00Z'$$,
    $$SELECT * FROM sunday$$, 'Tuesday''s runs from noon to one are Sunday''s, two days later');
SELECT is((SELECT due_at FROM tickq.job_kind WHERE name = 'monday'), '2026-06-15 12:00Z'::timestamptz,
    'and the Monday kind still waits for next Monday');

SELECT finish();
ROLLBACK;
