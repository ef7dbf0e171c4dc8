-- The first sync of a queue: its settings replace the defaults, which no registry wrote, so they
-- are not drift; from the second sync on, every difference is.
BEGIN;
SELECT plan(4);

SELECT is((SELECT count(*)::integer FROM tickq.job_kind), 0, 'a queue never synced');
SELECT is_empty($$SELECT * FROM tickq.sync_registry('{
    "settings": {"retry_base": 10, "stale_after": 600},
    "kinds": {"a": {"command": ["x"], "every": 300, "timeout": 60}}}', '2026-06-01 10:00Z')$$,
    'the first sync finds no drift in settings that differ from the defaults');
SELECT results_eq($$SELECT retry_base, stale_after FROM tickq.settings$$,
    $$VALUES ('10 seconds'::interval, '10 minutes'::interval)$$, 'and takes them');
SELECT results_eq($$SELECT field, stored_value, registry_value FROM tickq.sync_registry('{
    "settings": {"retry_base": 20, "stale_after": 900},
    "kinds": {"a": {"command": ["x"], "every": 300, "timeout": 60}}}', '2026-06-01 10:01Z')
    ORDER BY field$$,
    $$VALUES ('settings.retry_base', '10'::jsonb, '20'::jsonb),
        ('settings.stale_after', '600'::jsonb, '900'::jsonb)$$,
    'the next sync records each difference as drift');

SELECT * FROM finish();
ROLLBACK;
