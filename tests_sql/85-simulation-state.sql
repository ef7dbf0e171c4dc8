-- The simulator's state and its copies (sql/api/18_simulation_state.sql): what claims and
-- reports read, relative to an instant, is the same an hour later for hourly kinds; a stretch
-- copied an hour later leaves the queue in the state the clock would have made; the clock's
-- next due time; a zone that keeps its offset; where a weekly kind breaks a day's repeat; a
-- cron string's calendar kept for a simulator's session.
BEGIN;
SELECT plan(17);

-- one slot; a (high, hourly at :00) holds it 20 minutes, b (low, hourly at :10) waits behind it
SELECT * FROM tickq.sync_registry('{
    "settings": {"slots": 1, "tick": 300, "stale_after": 900, "housekeeping_every": 86400},
    "kinds": {
        "a": {"command": ["x"], "every": 3600, "timeout": 1200, "priority": "high"},
        "b": {"command": ["x"], "every": 3600, "offset": 600, "timeout": 300, "priority": "low"}
    }}', '2026-06-01 09:00Z');

SELECT tickq.simulation_start('2026-06-01 10:00Z');
SELECT is(tickq.simulation_state('2026-06-01 10:00Z'),
    '{"kinds": [], "slots": [], "pools": []}'::jsonb, 'at rest where simulation_start put it: nothing to say');
SELECT is(tickq.simulation_next_due(), '2026-06-01 10:00Z'::timestamptz, 'the first claim can find a at 10:00');

CREATE TEMP TABLE mark (at timestamptz PRIMARY KEY, state jsonb, ids jsonb, first_id bigint);
CREATE FUNCTION pg_temp.mark(p_at timestamptz) RETURNS void LANGUAGE sql AS $$
    INSERT INTO mark SELECT p_at, m.state, m.ids, m.first_id FROM tickq.simulation_mark(p_at) AS m
$$;
SELECT tickq.simulate_events('2026-06-01 10:14:59.999999Z', NULL, '2026-06-01 10:00Z');
SELECT pg_temp.mark('2026-06-01 10:15Z');
SELECT is((SELECT state -> 'kinds' -> 0 ->> 0 FROM mark), 'a', 'at 10:15 a runs');
SELECT is((SELECT (state -> 'kinds' -> 0 -> 5 ->> 2)::numeric FROM mark), -900::numeric,
    'claimed 900 seconds before');
SELECT is((SELECT (state -> 'kinds' -> 1 ->> 1)::numeric FROM mark), -300::numeric,
    'and b waits, due 300 seconds before');
SELECT is((SELECT state -> 'slots' -> 0 ->> 1 FROM mark), 'a',
    'a holds the slot, named by its kind, not its run''s id');

SELECT tickq.simulate_events('2026-06-01 11:14:59.999999Z', NULL, '2026-06-01 10:15Z');
SELECT pg_temp.mark('2026-06-01 11:15Z');
SELECT is((SELECT state FROM mark WHERE at = '2026-06-01 11:15Z'),
    (SELECT state FROM mark WHERE at = '2026-06-01 10:15Z'), 'an hour later the same state, seen from its instant');
SELECT isnt((SELECT ids FROM mark WHERE at = '2026-06-01 11:15Z'),
    (SELECT ids FROM mark WHERE at = '2026-06-01 10:15Z'), 'with another run of a');

-- The hour from 10:15 copied to 11:15, where the clock stands.
SELECT tickq.simulation_copy('2026-06-01 10:15Z', '2026-06-01 11:15Z', '1 hour', l.state, f.ids, l.ids, l.ids,
    f.first_id, l.first_id, l.first_id)
FROM mark AS f, mark AS l WHERE f.at = '2026-06-01 10:15Z' AND l.at = '2026-06-01 11:15Z';
SELECT is(tickq.simulation_state('2026-06-01 12:15Z'), (SELECT state FROM mark WHERE at = '2026-06-01 11:15Z'),
    'the copy leaves at 12:15 the state the clock left at 11:15');
SELECT set_eq(
    $$SELECT kind, claimed_at, finished_at, outcome::text FROM tickq.job_run
        WHERE claimed_at >= '2026-06-01 11:15Z' AND claimed_at < '2026-06-01 12:15Z'$$,
    $$SELECT kind, claimed_at + interval '1 hour' AS claimed_at,
            CASE WHEN finished_at < '2026-06-01 11:15Z' THEN finished_at + interval '1 hour' END AS finished_at,
            CASE WHEN finished_at < '2026-06-01 11:15Z' THEN outcome::text ELSE 'running' END AS outcome
        FROM tickq.job_run WHERE claimed_at >= '2026-06-01 10:15Z' AND claimed_at < '2026-06-01 11:15Z'$$,
    'its runs are the hour before''s, an hour later; the one going on at its end goes on');
SELECT is((SELECT finished_at FROM tickq.job_run WHERE kind = 'a' AND claimed_at = '2026-06-01 11:00Z'),
    '2026-06-01 11:20Z'::timestamptz, 'and the run going on where it began ended as its own did');
SELECT tickq.simulate_events('2026-06-01 13:14:59.999999Z', NULL, '2026-06-01 12:15Z');
SELECT is(tickq.simulation_state('2026-06-01 13:15Z'), (SELECT state FROM mark WHERE at = '2026-06-01 11:15Z'),
    'and the clock goes on from it as from the hour it copied');

SELECT ok(tickq.zone_steady('Europe/London', '2027-04-01 00:00Z', '2027-04-05 00:00Z'), 'London keeps BST in April');
SELECT ok(NOT tickq.zone_steady('Europe/London', '2027-03-27 00:00Z', '2027-03-29 00:00Z'),
    'but not across its spring change');

-- a weekly cron line and a nightly one
SELECT * FROM tickq.sync_registry('{
    "settings": {"slots": 2, "tick": 300, "stale_after": 900, "housekeeping_every": 86400},
    "kinds": {"weekly": {"command": ["x"], "cron": "10 3 * * tue", "timeout": 60},
        "nightly": {"command": ["x"], "cron": "*/5 1 * * *", "timeout": 60}}}', '2026-06-01 00:00Z');
SELECT is((SELECT array_agg(b.first_at ORDER BY b.first_at) FROM tickq.simulation_breaks('2026-06-01 00:00Z',
        '2026-06-02 00:00Z', '1 day') AS b WHERE b.first_at < '2026-06-03 00:00Z'),
    ARRAY['2026-06-01 03:10Z', '2026-06-02 03:10Z']::timestamptz[],
    'a day breaks where Tuesday''s slot is and the day before lacks it (nightly never does)');

SELECT set_config('tickq.simulator', 'on', true);
SELECT is(tickq.cron_calendar('*/5 1 * * *', 'UTC'), tickq.cron_parse('*/5 1 * * *', 'UTC'),
    'a simulator''s session keeps a cron string''s calendar, the same one');
SELECT ok(current_setting('tickq.cron_' || md5('*/5 1 * * *' || E'\n' || 'UTC'), true) <> '',
    'in a setting of the session');

SELECT finish();
ROLLBACK;
