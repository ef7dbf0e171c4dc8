-- The registry's shape as a whole has one owner, tickq.registry_top_problem: sync_registry
-- refuses what it names (TQ002, key *) and registry_problems reports it, in the same words. A
-- registry table's entries are judged one by one (tickq.entry_problems) by the parser its sync
-- uses, so one answer names every entry at fault: the same walk for [agents] and [pools].
BEGIN;
SELECT plan(13);

SELECT is(tickq.registry_top_problem('[]'), 'the registry must be a JSON object', 'an array: no object');
SELECT is(tickq.registry_top_problem(NULL), 'the registry must be a JSON object', 'nothing at all: no object');
SELECT is(tickq.registry_top_problem('{"settings": {}, "kinds": []}'), '"settings" and "kinds" must be objects',
    'kinds as a list');
SELECT is(tickq.registry_top_problem('{"settings": 3}'), '"settings" and "kinds" must be objects',
    'settings as a number');
SELECT is(tickq.registry_top_problem('{}'), NULL, 'settings and kinds may be left out');
SELECT throws_ok($$SELECT * FROM tickq.sync_registry('{"kinds": "x"}')$$, 'TQ002',
    'registry: settings, key "*": "settings" and "kinds" must be objects', 'sync_registry refuses it');
SELECT results_eq($$SELECT kind, key, problem FROM tickq.registry_problems('{"kinds": "x"}')$$,
    $$VALUES (NULL::text, '*'::text, '"settings" and "kinds" must be objects'::text)$$,
    'registry_problems reports it alone, in the same words');

SELECT results_eq($$SELECT key, problem FROM tickq.entry_problems('{"sf": {"slots": 1001}, "ok": {"slots": 2},
    "x": {"slots": 1, "size": 2}}', 'tickq.parse_pools') ORDER BY 1$$,
    $$VALUES ('pools.sf.slots'::text, 'must be a whole number from 1 to 1000, got 1001'::text),
        ('pools.x.size', 'unknown key')$$,
    'pools: each refused entry by the key the refusal names, the good one not at all');
SELECT results_eq($$SELECT key, problem FROM tickq.entry_problems('{"max_turns": 7, "retries": -1, "weight": 1}',
    'tickq.parse_agents') ORDER BY 1$$,
    $$VALUES ('agents.max_turns'::text, 'must be a whole number from 1 to 6, got 7'::text),
        ('agents.retries', 'must be a whole number from 0 to 10, got -1')$$,
    'agents: each key alone, so both refused keys are named');
SELECT is_empty($$SELECT * FROM tickq.entry_problems('{"sf": {"slots": 3}}', 'tickq.parse_pools')$$,
    'a table its parser takes: no problem');
SELECT results_eq($$SELECT * FROM tickq.entry_problems('[1]', 'tickq.parse_pools')$$,
    $$VALUES ('pools'::text, 'must be a table of pools ([pools.NAME])'::text)$$,
    'a pools value that is no table: the parser''s own refusal, the entries not walked');
SELECT results_eq($$SELECT * FROM tickq.entry_problems('"x"', 'tickq.parse_agents')$$,
    $$VALUES ('agents'::text, 'must be a table'::text)$$, 'likewise an agents value');
SELECT is_empty($$SELECT * FROM tickq.entry_problems(NULL, 'tickq.parse_pools')$$,
    'no pools at all: no problem, as the sync takes it');

SELECT * FROM finish();
ROLLBACK;
