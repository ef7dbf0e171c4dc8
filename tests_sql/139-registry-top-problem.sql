-- The registry's shape as a whole has one owner, tickq.registry_top_problem: sync_registry
-- refuses what it names (TQ002, key *) and registry_problems reports it, in the same words.
BEGIN;
SELECT plan(7);

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

SELECT * FROM finish();
ROLLBACK;
