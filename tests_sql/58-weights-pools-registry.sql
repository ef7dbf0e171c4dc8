-- Weights and pools in the registry: refused values named by their key (unknown pool, weight over
-- slots, pool slots out of bounds) by the sync and by registry_problems alike; a pool's limit
-- drifts like a setting; a pool gone from the registry drains; [agents] weight.
BEGIN;
SELECT plan(21);

SELECT throws_ok($$SELECT * FROM tickq.sync_registry('{"settings": {"slots": 3},
    "kinds": {"a": {"command": ["x"], "every": 300, "timeout": 60, "pools": ["gpu"]}}}')$$,
    'TQ002', 'registry: kind "a", key "pools": unknown pool "gpu": the registry has no [pools.gpu]',
    'a kind naming an unknown pool is refused');
SELECT results_eq($$SELECT kind, key, problem FROM tickq.registry_problems('{"settings": {"slots": 3},
    "kinds": {"a": {"command": ["x"], "every": 300, "timeout": 60, "pools": ["gpu"]}}}')$$,
    $$VALUES ('a', 'pools', 'unknown pool "gpu": the registry has no [pools.gpu]')$$, 'registry_problems names it too');
SELECT throws_ok($$SELECT * FROM tickq.sync_registry('{"settings": {"slots": 3},
    "kinds": {"a": {"command": ["x"], "every": 300, "timeout": 60, "weight": 4}}}')$$,
    'TQ002', 'registry: kind "a", key "weight": must not be more than settings.slots (3), got 4',
    'a weight over slots is refused');
SELECT results_eq($$SELECT kind, key, problem FROM tickq.registry_problems('{"settings": {"slots": 3},
    "kinds": {"a": {"command": ["x"], "every": 300, "timeout": 60, "weight": 4}}}')$$,
    $$VALUES ('a', 'weight', 'must not be more than settings.slots (3), got 4')$$, 'and listed');
SELECT throws_ok($$SELECT * FROM tickq.sync_registry('{"settings": {"slots": 3},
    "kinds": {"a": {"command": ["x"], "every": 300, "timeout": 60, "weight": 0}}}')$$,
    'TQ002', 'registry: kind "a", key "weight": must be a whole number from 1 to 1000, got 0', 'a weight of 0');
SELECT throws_ok($$SELECT * FROM tickq.sync_registry('{"settings": {"slots": 3}, "pools": {"sf": {"slots": 0}},
    "kinds": {}}')$$,
    'TQ002', 'registry: key "pools.sf.slots": must be a whole number from 1 to 1000, got 0',
    'pool slots out of bounds are refused naming pools.NAME.slots');
SELECT results_eq($$SELECT kind, key, problem FROM tickq.registry_problems('{"settings": {"slots": 3},
    "pools": {"sf": {"slots": 1001}, "ok": {"slots": 2}, "Bad!": {"slots": 1}, "x": {"slots": 1, "size": 2}},
    "kinds": {"a": {"command": ["x"], "every": 300, "timeout": 60, "pools": ["ok", "ok"]}}}') ORDER BY 2$$,
    $$VALUES ('a', 'pools', 'pools must not repeat, got ["ok", "ok"]'),
        (NULL, 'pools.Bad!', 'a pool name is 1-63 characters of a-z, 0-9, _ - starting with a letter or digit'),
        (NULL, 'pools.sf.slots', 'must be a whole number from 1 to 1000, got 1001'),
        (NULL, 'pools.x.size', 'unknown key')$$,
    'every problem of the pools, each named by its key');
SELECT throws_ok($$SELECT * FROM tickq.sync_registry('{"settings": {"slots": 2}, "kinds": {},
    "agents": {"weight": 3}}')$$,
    'TQ002', 'registry: key "agents.weight": must not be more than settings.slots (2), got 3',
    'an agents weight over slots is refused');
SELECT is_empty($$SELECT * FROM tickq.registry_problems('{"settings": {"slots": 3}, "pools": {"sf": {"slots": 1}},
    "kinds": {"a": {"command": ["x"], "every": 300, "timeout": 60, "weight": 3, "pools": ["sf"]}},
    "agents": {"weight": 2}}')$$, 'weights up to slots and known pools are fine');

-- Synced, drifted, lowered and removed like settings.
CREATE TEMPORARY TABLE reg (doc jsonb);
INSERT INTO reg VALUES ('{"settings": {"slots": 3}, "pools": {"sf": {"slots": 1}, "gpu": {"slots": 2}},
    "kinds": {"a": {"command": ["x"], "every": 300, "timeout": 60, "weight": 2, "pools": ["sf"]},
        "g": {"command": ["x"], "every": 300, "timeout": 60, "pools": ["gpu"]}},
    "agents": {"weight": 2}}');
SELECT is_empty($$SELECT * FROM tickq.sync_registry((SELECT doc FROM reg), '2026-06-01 10:00Z')$$,
    'the first sync: no drift');
SELECT results_eq($$SELECT name, weight, pools, registry -> 'weight', registry -> 'pools' FROM tickq.job_kind
    WHERE name IN ('a', 'g') ORDER BY 1$$,
    $$VALUES ('a', 2, '{sf}'::text[], '2'::jsonb, '["sf"]'::jsonb), ('g', 1, '{gpu}', NULL, '["gpu"]')$$,
    'the kinds carry their weight and pools (the default weight unsaid in the mirror)');
SELECT is((SELECT weight FROM tickq.agent_settings), 2, '[agents] weight is kept');
SELECT is_empty($$SELECT * FROM tickq.sync_registry((SELECT doc FROM reg), '2026-06-01 10:01Z')$$,
    'the same registry again: nothing');
UPDATE tickq.pool SET slots = 5 WHERE name = 'sf';
SELECT results_eq($$SELECT kind, field, stored_value, registry_value, registry_edit
    FROM tickq.sync_registry((SELECT doc FROM reg), '2026-06-01 10:02Z')$$,
    $$VALUES (NULL::text, 'pools.sf.slots', '5'::jsonb, '1'::jsonb, true)$$,
    'a pool''s limit changed behind the registry''s back is drift, and the registry wins');
SELECT results_eq($$SELECT slots FROM tickq.pool WHERE name = 'sf'$$, $$VALUES (1)$$, 'back to 1');
SELECT is((SELECT count(*)::integer FROM tickq.drift WHERE field = 'pools.sf.slots'), 1, 'recorded');
UPDATE tickq.job_kind SET weight = 3 WHERE name = 'a';
SELECT results_eq($$SELECT kind, field, stored_value, registry_value
    FROM tickq.sync_registry((SELECT doc FROM reg), '2026-06-01 10:03Z')$$,
    $$VALUES ('a', 'weight', '3'::jsonb, '2'::jsonb)$$, 'a weight changed behind its back is drift too');

-- A pool gone from the registry drains: its free rows go at once, a busy one when its run ends.
UPDATE tickq.job_kind SET due_at = 'infinity';
UPDATE tickq.job_kind SET due_at = '2026-06-01 10:00Z' WHERE name = 'g';
SELECT results_eq($$SELECT kind FROM tickq.claim_jobs(3, 'd1', '2026-06-01 10:04Z')$$, $$VALUES ('g')$$, 'g runs');
UPDATE reg SET doc = jsonb_set(doc #- '{pools,gpu}', '{kinds,g}', '{"command": ["x"], "every": 300, "timeout": 60}');
SELECT results_eq($$SELECT field, stored_value, registry_value FROM tickq.sync_registry((SELECT doc FROM reg),
    '2026-06-01 10:05Z') WHERE field LIKE 'pools.%'$$,
    $$VALUES ('pools.gpu.slots', '2'::jsonb, NULL::jsonb)$$, 'the removed pool is drift');
SELECT results_eq($$SELECT p.slots, (SELECT count(*)::integer FROM tickq.pool_slot AS ps WHERE ps.pool = p.name)
    FROM tickq.pool AS p WHERE p.name = 'gpu'$$, $$VALUES (0, 1)$$, 'it drains: slots 0, only the busy row left');
SELECT NULL FROM tickq.report_run((SELECT run_id FROM tickq.job_kind WHERE name = 'g'), 'd1', 'ok', 0, NULL, NULL,
    '2026-06-01 10:06Z');
-- the next sync
SELECT * FROM tickq.sync_registry((SELECT doc FROM reg), '2026-06-01 10:07Z');
SELECT is_empty($$SELECT * FROM tickq.pool WHERE name = 'gpu'$$, 'deletes the drained pool');

SELECT * FROM finish();
ROLLBACK;
