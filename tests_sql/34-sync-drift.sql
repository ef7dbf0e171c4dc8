-- sync_registry returns its drift classified: an edit of the registry file or a row changed
-- behind its back (registry_edit), the env names that changed, and the unit of a duration.
BEGIN;
SELECT plan(5);

-- a first sync
SELECT tickq.sync_registry('{"kinds": {"a": {"command": ["a"], "every": 300, "timeout": 60,
    "env": {"K": "sha256:1", "L": "sha256:2"}}}}', '2026-06-01 10:00Z');
SELECT is_empty($$SELECT * FROM tickq.sync_registry('{"kinds": {"a": {"command": ["a"], "every": 300,
    "timeout": 60, "env": {"K": "sha256:1", "L": "sha256:2"}}}}', '2026-06-01 10:01Z')$$, 'no drift when nothing changed');

UPDATE tickq.job_kind SET retries = 3 WHERE name = 'a';
CREATE TEMP TABLE d AS SELECT * FROM tickq.sync_registry('{"settings": {"tick": 600}, "kinds": {"a":
    {"command": ["a"], "every": 600, "timeout": 60, "env": {"K": "sha256:9", "L": "sha256:2", "M": "sha256:3"}}}}',
    '2026-06-01 10:02Z');

SELECT results_eq($$SELECT kind, field, registry_edit, unit FROM d WHERE field <> 'env' ORDER BY 1, 2$$,
    $$VALUES ('a'::text, 'every'::text, true, 's'::text), ('a', 'retries', false, NULL),
        (NULL, 'settings.tick', true, 's')$$,
    'a changed cadence is an edit of the file, retries set in psql is not; durations carry their unit');
SELECT results_eq($$SELECT registry_edit, changed FROM d WHERE field = 'env'$$,
    $$VALUES (true, '{K,M}'::text[])$$,
    'env changed in the file (the mirror untouched) is an edit, naming the variables whose values changed');
SELECT results_eq($$SELECT count(*)::integer FROM tickq.drift WHERE detected_at = '2026-06-01 10:02Z'$$,
    $$VALUES (4)$$, 'each drift row is also recorded');
SELECT results_eq($$SELECT stored_value, registry_value FROM d WHERE field = 'every'$$,
    $$VALUES ('300'::jsonb, '600'::jsonb)$$, 'values stay in the registry''s JSON terms');

SELECT * FROM finish();
ROLLBACK;
