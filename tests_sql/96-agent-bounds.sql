-- An agent row's own bounds (every, the count of at times and of tools, the prompt's length)
-- are rows agent.* of tickq.registry_limits, the one table of bounds: tickq.check_agent judges
-- by them, so each bound is refused just past it and taken at it, and a row moved there moves
-- the check with it.
BEGIN;
SELECT plan(12);

SELECT is_empty($$SELECT * FROM tickq.sync_registry(jsonb_build_object(
    'settings', '{}'::jsonb,
    'kinds', '{"email": {"command": ["bin/send"], "every": 300, "timeout": 60}}'::jsonb,
    'agents', jsonb_build_object('tools', (SELECT jsonb_agg(format('t%s', n)) FROM generate_series(1, 33) AS n))),
    '2026-01-05 12:00Z')$$,
    'a registry offering 33 tools syncs');

SELECT results_eq($$SELECT l.key, l.low, l.high, l.unit FROM tickq.registry_limits() AS l
    WHERE l.key LIKE 'agent.%' ORDER BY 1$$,
    $$VALUES ('agent.at', 1::numeric, 48::numeric, ''), ('agent.every', 60, 366 * 86400, 's'),
        ('agent.prompt', 1, 32768, 'chars'), ('agent.tools', 0, 32, '')$$,
    'an agent row''s bounds are rows of the one table, apart from the [agents] caps (agents.*)');

SELECT throws_ok($$SELECT tickq.save_agent('a', '{"prompt": "x", "every": 59}', true)$$, 'TQ040',
    'agent ''a'': every: every must be from 1m to 366d, got 59s', 'every just under its low bound');
SELECT throws_ok($$SELECT tickq.save_agent('a', '{"prompt": "x", "every": 31622401}', true)$$, 'TQ040',
    'agent ''a'': every: must be a duration from 1s to 366d, got 366d1s', 'every just over its high bound');
SELECT lives_ok($$SELECT tickq.save_agent('a', '{"prompt": "x", "every": 60}', true);
    SELECT tickq.save_agent('a', '{"every": 31622400}', false)$$, 'every at either bound is taken');

SELECT throws_ok(format($$SELECT tickq.save_agent('b', %L, true)$$, jsonb_build_object('prompt', 'x',
    'at', (SELECT jsonb_agg(to_char(time '00:00' + n * interval '1 minute', 'HH24:MI'))
        FROM generate_series(0, 48) AS n))),
    'TQ040', NULL, '49 at times are refused');
SELECT is(cardinality((tickq.save_agent('b', jsonb_build_object('prompt', 'x',
    'at', (SELECT jsonb_agg(to_char(time '00:00' + n * interval '1 minute', 'HH24:MI'))
        FROM generate_series(0, 47) AS n)),
    true)).at_times), 48, '48 at times are taken');

SELECT throws_ok(format($$SELECT tickq.save_agent('c', %L, true)$$, jsonb_build_object('prompt', 'x', 'every', 3600,
    'tools', (SELECT jsonb_agg(format('t%s', n)) FROM generate_series(1, 33) AS n))),
    'TQ040', NULL, '33 tools are refused, though the registry offers them');
SELECT lives_ok(format($$SELECT tickq.save_agent('c', %L, true)$$, jsonb_build_object('prompt', 'x', 'every', 3600,
    'tools', (SELECT jsonb_agg(format('t%s', n)) FROM generate_series(1, 32) AS n))), '32 tools are taken');

SELECT lives_ok(format($$SELECT tickq.save_agent('d', %L, true)$$,
    jsonb_build_object('prompt', repeat('p', 32768), 'every', 3600)), 'a prompt of 32768 characters is taken');

-- The table is the rule: move agent.every's low bound to 2 minutes and the check follows.
ALTER FUNCTION tickq.registry_limits() RENAME TO registry_limits_kept;
CREATE FUNCTION tickq.registry_limits()
RETURNS TABLE (key text, low numeric, high numeric, unit text)
LANGUAGE sql IMMUTABLE
AS $$
    SELECT l.key, CASE WHEN l.key = 'agent.every' THEN 120 ELSE l.low END, l.high, l.unit
    FROM tickq.registry_limits_kept() AS l
$$;
SELECT throws_ok($$SELECT tickq.save_agent('e', '{"prompt": "x", "every": 90}', true)$$, 'TQ040',
    'agent ''e'': every: every must be from 2m to 366d, got 1m30s', 'a bound moved in the table moves the check');
SELECT lives_ok($$SELECT tickq.save_agent('e', '{"prompt": "x", "every": 120}', true)$$,
    'and the new bound itself is taken');

SELECT * FROM finish();
ROLLBACK;
