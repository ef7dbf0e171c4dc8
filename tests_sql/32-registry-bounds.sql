-- Every bound of the registry in one table: the agents' caps, the runner's database timeouts and
-- the housekeeping kind's timeout are judged by the sync and by registry_problems, each naming
-- the key as the registry file spells it.
BEGIN;
SELECT plan(15);

SELECT results_eq($$SELECT l.key, l.low, l.high FROM tickq.registry_limits() AS l
    WHERE l.key LIKE 'agents.%' OR l.key LIKE 'db_%' OR l.key = 'housekeeping_timeout' ORDER BY 1$$,
    $$VALUES ('agents.deliver_timeout', 1::numeric, 300::numeric), ('agents.http_attempts', 1, 10),
        ('agents.max_turns', 1, 6), ('agents.request_timeout', 1, 600), ('agents.retries', 0, 10),
        ('agents.timeout', 1, 600), ('agents.tools.timeout', 1, 300), ('agents.weight', 1, 1000),
        ('db_connect_timeout', 1, 600),
        ('db_lock_timeout', 1, 3600), ('db_statement_timeout', 1, 86400), ('housekeeping_timeout', 1, 604800)$$,
    'the caps of agents, the database timeouts and housekeeping_timeout are rows of the one table');

SELECT throws_ok($$SELECT tickq.sync_registry('{"settings": {"db_lock_timeout": 0}, "kinds": {}}')$$,
    'TQ002', 'registry: settings, key "db_lock_timeout": must be a duration from 1s to 1h, got 0s',
    'a database timeout of 0 (no timeout at all) is refused');
SELECT throws_ok($$SELECT tickq.sync_registry('{"settings": {"db_statement_timeout": 315360000}, "kinds": {}}')$$,
    'TQ002', 'registry: settings, key "db_statement_timeout": must be a duration from 1s to 1d, got 3650d',
    'a statement timeout of ten years is refused');
SELECT throws_ok($$SELECT tickq.sync_registry('{"settings": {"db_connect_timeout": 601}, "kinds": {}}')$$,
    'TQ002', 'registry: settings, key "db_connect_timeout": must be a duration from 1s to 10m, got 10m1s',
    'a connect timeout past 10 minutes is refused');
SELECT throws_ok($$SELECT tickq.sync_registry('{"settings": {"housekeeping_timeout": 0}, "kinds": {}}')$$,
    'TQ002', 'registry: settings, key "housekeeping_timeout": must be a duration from 1s to 7d, got 0s',
    'housekeeping_timeout is named as the user wrote it, not as a key of tickq.housekeeping');
SELECT throws_ok($$SELECT tickq.sync_registry('{"settings": {"capacity_margin": "nan"}, "kinds": {}}')$$,
    'TQ002', 'registry: settings, key "capacity_margin": must be a number from 0 to 0.9, got "nan"',
    'a capacity margin that is not a number is refused naming the key');

SELECT throws_ok($$SELECT tickq.sync_registry('{"kinds": {}, "agents": {"max_turns": 7}}')$$,
    'TQ002', 'registry: key "agents.max_turns": must be a whole number from 1 to 6, got 7', 'max_turns 7');
SELECT throws_ok($$SELECT tickq.sync_registry('{"kinds": {}, "agents": {"timeout": 660}}')$$,
    'TQ002', 'registry: key "agents.timeout": must be a duration from 1s to 10m, got 11m', 'an agent timeout of 11m');
SELECT throws_ok($$SELECT tickq.sync_registry('{"kinds": {}, "agents": {"retries": -1}}')$$,
    'TQ002', 'registry: key "agents.retries": must be a whole number from 0 to 10, got -1', 'retries -1');
SELECT throws_ok($$SELECT tickq.sync_registry('{"kinds": {}, "agents": {"tools": ["t"],
    "tool_timeouts": {"t": 360}}}')$$,
    'TQ002', 'registry: key "agents.tools.t.timeout": must be a duration from 1s to 5m, got 6m',
    'a tool''s timeout is named by its tool');

SELECT results_eq($$SELECT kind, key, problem FROM tickq.registry_problems('{"settings": {"tick": 0,
    "db_lock_timeout": 0}, "kinds": {}, "agents": {"max_turns": 7, "retries": -1, "tool_timeouts": {"t": 301}}}')
    ORDER BY 2$$,
    $$VALUES (NULL::text, 'agents.max_turns'::text, 'must be a whole number from 1 to 6, got 7'::text),
        (NULL, 'agents.retries', 'must be a whole number from 0 to 10, got -1'),
        (NULL, 'agents.tools.t.timeout', 'must be a duration from 1s to 5m, got 5m1s'),
        (NULL, 'db_lock_timeout', 'must be a duration from 1s to 1h, got 0s'),
        (NULL, 'tick', 'must be a duration from 1s to 1d, got 0s')$$,
    'registry_problems names every key at fault at once, agents'' keys too');

-- Absent keys of [agents] take the caps of the table as their defaults.
SELECT lives_ok($$SELECT tickq.sync_registry('{"kinds": {}, "agents": {"max_turns": 2, "timeout": 60}}')$$,
    'caps within the bounds are taken');
-- an [agents] section of defaults
SELECT tickq.sync_registry('{"kinds": {}, "agents": {}}');
SELECT results_eq($$SELECT max_turns, max_timeout, retries FROM tickq.agent_settings$$,
    $$VALUES (6, '10 minutes'::interval, 0)$$, 'the defaults are the upper bounds of tickq.registry_limits');

-- The rows hold the same bounds behind the registry's back.
SELECT throws_ok($$UPDATE tickq.agent_settings SET max_turns = 7$$, '23514', NULL,
    'agent_settings holds the max_turns bound');
SELECT throws_ok($$UPDATE tickq.agent_settings SET max_timeout = '11 minutes'$$, '23514', NULL,
    'agent_settings holds the timeout bound');

SELECT * FROM finish();
ROLLBACK;
