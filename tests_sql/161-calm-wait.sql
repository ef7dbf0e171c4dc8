-- Where the slots run short in a calm stretch, the runs that found no free slot row wait for the
-- first to come free (tickq.simulation_calm_wait, sql/api/18_simulation_calm_walk.sql): at that
-- instant they are claimed with the runs due by then in claim order (a kind waiting longer than
-- stale_after first, then priority, due time, name, as tickq.claim_candidates orders them), and
-- each waiting kind's later runs are worked out again from its run's new end (its next slot
-- after it, claimed at the first tick at or after it, up to its first run after the part), the
-- runs it had before dropped; the other kinds' runs stay as they were. tests_sql/130 holds the
-- whole calm path to the real loop; here the rule itself, on runs written out by hand.
BEGIN;
SELECT plan(4);

SELECT * FROM tickq.sync_registry('{
    "settings": {"slots": 1, "tick": 60, "stale_after": 180, "housekeeping_every": 86400},
    "kinds": {
        "a": {"command": ["x"], "cron": "*/5 * * * *", "timeout": 60, "priority": "low"},
        "b": {"command": ["x"], "every": 120, "timeout": 60, "priority": "high"},
        "c": {"command": ["x"], "cron": "6 * * * *", "timeout": 60}
    }}', '2026-06-01 09:00Z');

-- The part 10:00 - 10:15. Before: a at 10:00 and b at 10:02 found no free row (they wait until
-- 10:04), a's next run (10:05) and b's (10:04) were worked out from the runs they did not have
-- then; c at 10:06 does not wait.
SET LOCAL timezone = 'UTC';
CREATE FUNCTION pg_temp.at(p_times text[]) RETURNS timestamptz[] LANGUAGE sql AS $$
    SELECT array_agg(('2026-06-01 ' || u.t || 'Z')::timestamptz ORDER BY u.i) FROM unnest(p_times) WITH ORDINALITY AS u (t, i)
$$;
CREATE TEMP TABLE given AS
SELECT * FROM tickq.simulation_calm_wait(
    ARRAY['a', 'b', 'b', 'a', 'c', 'b', 'a', 'b', 'b', 'b', 'a'],
    pg_temp.at(ARRAY['10:00', '10:02', '10:04', '10:05', '10:06', '10:06', '10:10', '10:08', '10:10', '10:12',
        '10:15']),
    pg_temp.at(ARRAY['10:00', '10:02', '10:04', '10:05', '10:06', '10:06', '10:10', '10:08', '10:10', '10:12',
        '10:15']),
    pg_temp.at(ARRAY['10:01', '10:03', '10:05', '10:06', '10:07', '10:07', '10:11', '10:09', '10:11', '10:13',
        '10:16']),
    ARRAY['low', 'high', 'high', 'low', 'normal', 'high', 'low', 'high', 'high', 'high', 'low']::tickq.priority[],
    ARRAY[NULL, NULL, NULL, NULL, '1 hour', NULL, NULL, NULL, NULL, NULL, NULL]::interval[],
    '2026-06-01 10:04Z', '2026-06-01 10:00Z', '2026-06-01 10:14:59.999999Z');

CREATE TEMP TABLE got AS
SELECT u.i, u.kind, to_char(u.due, 'HH24:MI') AS due, to_char(u.claimed, 'HH24:MI') AS claimed,
    to_char(u.ends, 'HH24:MI') AS ends, u.priority::text AS priority, u.catch_up
FROM given AS g, unnest(g.kinds, g.dues, g.claimed, g.ends, g.priorities, g.catch_ups)
    WITH ORDINALITY AS u (kind, due, claimed, ends, priority, catch_up, i);

SELECT results_eq('SELECT kind, due, claimed FROM got WHERE claimed = $$10:04$$ ORDER BY i',
    $$VALUES ('a', '10:00', '10:04'), ('b', '10:02', '10:04')$$,
    'the waiting runs are claimed when the row comes free, a (low, waiting longer than stale_after) before b (high)');
SELECT results_eq(
    'SELECT kind, due, claimed, ends FROM got WHERE kind IN ($$a$$, $$b$$) AND claimed > $$10:04$$ ORDER BY i',
    $$VALUES ('b', '10:06', '10:06', '10:07'), ('b', '10:08', '10:08', '10:09'), ('b', '10:10', '10:10', '10:11'),
        ('a', '10:10', '10:10', '10:11'), ('b', '10:12', '10:12', '10:13'), ('b', '10:14', '10:14', '10:15'),
        ('a', '10:15', '10:15', '10:16')$$,
    'their later runs worked out again from the new ends (b every two minutes from 10:05, a at its next slot '
    'after 10:05, b at 10:10 before a), up to the first run after the part or one going on at its end, the runs '
    'before dropped');
SELECT results_eq('SELECT kind, due, claimed, ends, priority, catch_up FROM got WHERE kind = $$c$$',
    $$VALUES ('c', '10:06', '10:06', '10:07', 'normal', interval '1 hour')$$,
    'a kind that does not wait keeps its runs, its priority and catch_up beside them');
SELECT is((SELECT string_agg(kind, ' ' ORDER BY i) FROM got WHERE claimed = '10:06'), 'b c',
    'at one instant in claim order: b (high) before c (normal)');

SELECT * FROM finish();
ROLLBACK;
