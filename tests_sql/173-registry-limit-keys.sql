-- tickq.registry_limit reads the key as the file spells it once and finds its bounds: a tool's
-- key those of agents.tools.*, a pool's those of pools.*, a nested key of a kind those of its
-- last part, an [agents] key its own; a key without bounds none.
BEGIN;
SELECT plan(2);

SELECT results_eq(
    $$SELECT k.key, l.low, l.high
      FROM unnest(ARRAY['agents.tools.search.timeout', 'pools.gpu.slots', 'steps[2].timeout', 'agents.max_turns',
          'agents.timeout', 'timeout', 'settings.tick', 'days']) WITH ORDINALITY AS k (key, n)
      CROSS JOIN LATERAL tickq.registry_limit(k.key) AS l ORDER BY k.n$$,
    $$VALUES ('agents.tools.search.timeout', 1::numeric, 300::numeric), ('pools.gpu.slots', 1, 1000),
        ('steps[2].timeout', 1, 7 * 86400), ('agents.max_turns', 1, 6), ('agents.timeout', 1, 600),
        ('timeout', 1, 7 * 86400), ('settings.tick', 1, 86400), ('days', -31, 31)$$,
    'each key''s bounds, as the file spells it');
SELECT is_empty($$SELECT * FROM tickq.registry_limit('command')$$, 'a key without bounds has none');

SELECT * FROM finish();
ROLLBACK;
