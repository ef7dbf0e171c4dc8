-- A sync of the registry the queue last synced writes nothing; a row written behind its back
-- (or another registry) makes the next sync do its whole work and report the drift.
BEGIN;
SELECT plan(17);

CREATE TEMP TABLE reg (doc jsonb);
INSERT INTO reg VALUES ('{"kinds": {"a": {"command": ["a"], "every": 300, "timeout": 60}}, "dispatcher": "h:1"}');

SELECT is_empty($$SELECT * FROM tickq.sync_registry((SELECT doc FROM reg), '2026-06-01 10:00Z')$$, 'a first sync');
SELECT isnt((SELECT digest FROM tickq.queue_registry), NULL, 'it keeps the registry''s digest');
SELECT is_empty($$SELECT * FROM tickq.registry_problems((SELECT doc - 'dispatcher' FROM reg))$$,
    'the registry synced last has no problem');

SELECT is_empty($$SELECT * FROM tickq.sync_registry(
    (SELECT doc || '{"dispatcher": "h:2"}' FROM reg), '2026-06-01 10:05Z')$$,
    'the same registry again, from another process of the host: no drift');
SELECT is((SELECT count(*)::integer FROM tickq.dispatcher WHERE name = 'h:2'), 0,
    'and nothing written: not even the dispatcher''s record');

UPDATE tickq.job_kind SET retries = 3 WHERE name = 'a';
SELECT is((SELECT digest FROM tickq.queue_registry), NULL, 'a row written behind the sync''s back forgets the digest');
SELECT results_eq($$SELECT kind, field FROM tickq.sync_registry((SELECT doc FROM reg), '2026-06-01 10:10Z')$$,
    $$VALUES ('a'::text, 'retries'::text)$$, 'so the next sync does its work and reports the drift');

UPDATE tickq.job_kind SET due_at = due_at + interval '1 minute', failure_streak = 1 WHERE name = 'a';
SELECT isnt((SELECT digest FROM tickq.queue_registry), NULL, 'what claims and reports write keeps it');

SELECT results_eq($$SELECT kind, field FROM tickq.sync_registry(
    '{"kinds": {"a": {"command": ["a"], "every": 600, "timeout": 60}}}', '2026-06-01 10:15Z')$$,
    $$VALUES ('a'::text, 'every'::text)$$, 'an edited registry is synced');

SELECT isnt_empty($$SELECT * FROM tickq.sync_registry(
    '{"kinds": {"a": {"command": ["a"], "at": ["06:00"], "timeout": 60}}}', '2026-06-01 10:20Z')$$,
    'a calendar kind now');
UPDATE tickq.job_kind SET days = '{1}' WHERE name = 'a';
SELECT is((SELECT digest FROM tickq.queue_registry), NULL,
    'a calendar column written behind the sync''s back forgets the digest too');

-- A sync from the registry's file records where it came from. The tick's verdict on the same
-- registry (sent with no source) is the one that sync's digest answers: no kind judged again.
CREATE TEMP TABLE sent (doc jsonb);
INSERT INTO sent VALUES ('{"kinds": {"a": {"command": ["a"], "every": 300, "timeout": 60}},
    "source": {"path": "/p/a/registry.toml", "host": "h"}}');
SELECT isnt_empty($$SELECT * FROM tickq.sync_registry((SELECT doc FROM sent), '2026-06-01 10:25Z')$$,
    'a sync from a file');
SELECT is((SELECT path FROM tickq.queue_registry), '/p/a/registry.toml', 'records the file');
SET LOCAL track_functions = 'pl';
CREATE TEMP TABLE judged AS SELECT coalesce(sum(calls), 0) AS calls FROM pg_stat_xact_user_functions
WHERE schemaname = 'tickq' AND funcname = 'kind_problems';
SELECT is_empty($$SELECT * FROM tickq.registry_problems((SELECT doc - 'source' FROM sent))$$,
    'the registry synced last from a file has no problem');
SELECT is((SELECT coalesce(sum(calls), 0) FROM pg_stat_xact_user_functions
        WHERE schemaname = 'tickq' AND funcname = 'kind_problems'), (SELECT calls FROM judged),
    'and no kind of it is judged again');
SELECT is_empty($$SELECT * FROM tickq.sync_registry(
    (SELECT doc || '{"source": {"path": "/p/b/registry.toml", "host": "h"}}' FROM sent),
    '2026-06-01 10:30Z')$$, 'the same registry from another file: no drift');
SELECT is((SELECT path FROM tickq.queue_registry), '/p/b/registry.toml',
    'but the file it came from is recorded: the digest does not hide a new source');

SELECT * FROM finish();
ROLLBACK;
