-- Whose queue it is: the sync records the registry that sent it (path, host); another
-- registry's sync that would retire kinds is refused (TQ090) unless it says replace_queue, and
-- one that retires nothing becomes the registry of record. Retired kinds are listed and
-- forgotten (row, runs, alerts, drift) only on purpose, and only when retired.
BEGIN;
SELECT plan(13);

SELECT lives_ok($$SELECT * FROM tickq.sync_registry('{
    "source": {"path": "/home/ana/alpha/registry.toml", "host": "h1"},
    "kinds": {"a1": {"command": ["x"], "every": 3600, "timeout": 60},
              "a2": {"command": ["x"], "every": 3600, "timeout": 60}}}', '2026-03-28 00:00Z')$$,
    'the first sync of an empty queue');
SELECT results_eq($$SELECT path, host, synced_at FROM tickq.queue_registry$$,
    $$VALUES ('/home/ana/alpha/registry.toml', 'h1', '2026-03-28 00:00Z'::timestamptz)$$,
    'the queue records the registry that synced it');
SELECT throws_like($$SELECT * FROM tickq.sync_registry('{
    "source": {"path": "/home/ana/beta/registry.toml", "host": "h2"},
    "kinds": {"b1": {"command": ["x"], "every": 3600, "timeout": 60}}}', '2026-03-28 00:01Z')$$,
    '%registry /home/ana/alpha/registry.toml on host h1%/home/ana/beta/registry.toml on host h2%'
    || 'retire 2 kind(s)%a1, a2%--replace-queue%',
    'another registry that would retire kinds is refused, naming both and the flag');
SELECT results_eq($$SELECT count(*) FROM tickq.job_kind WHERE retired_at IS NULL AND name LIKE 'a_'$$,
    $$VALUES (2::bigint)$$, 'the refused sync changed nothing');
SELECT lives_ok($$SELECT * FROM tickq.sync_registry('{
    "source": {"path": "/home/ana/gamma/registry.toml", "host": "h2"},
    "kinds": {"a1": {"command": ["x"], "every": 3600, "timeout": 60},
              "a2": {"command": ["x"], "every": 3600, "timeout": 60},
              "g1": {"command": ["x"], "every": 3600, "timeout": 60}}}', '2026-03-28 00:02Z')$$,
    'another registry that retires nothing syncs');
SELECT results_eq($$SELECT path, host FROM tickq.queue_registry$$,
    $$VALUES ('/home/ana/gamma/registry.toml', 'h2')$$, 'and is the registry of record');
SELECT lives_ok($$SELECT * FROM tickq.sync_registry('{
    "source": {"path": "/home/ana/beta/registry.toml", "host": "h2"}, "replace_queue": true,
    "kinds": {"b1": {"command": ["x"], "every": 3600, "timeout": 60}}}', '2026-03-28 00:03Z')$$,
    'replace_queue replaces the queue');
SELECT results_eq($$SELECT kind FROM tickq.retired_kinds_at('2026-03-28 00:04Z') ORDER BY kind$$,
    $$VALUES ('a1'), ('a2'), ('g1')$$, 'the retired kinds are listed');
SELECT is((SELECT count(*) FROM tickq.dispatcher), 0::bigint, 'no dispatcher named, none recorded');

-- Forgetting.
INSERT INTO tickq.job_run (kind, attempt, run_trigger, dispatcher, claimed_at, started_at, finished_at, outcome)
VALUES ('a1', 1, 'schedule', 'h1:1', '2026-03-28 00:00Z', '2026-03-28 00:00Z', '2026-03-28 00:00:01Z', 'ok');
SELECT throws_ok($$SELECT tickq.forget_kind('b1')$$, 'TQ091', NULL,
    'a live kind is not forgotten');
SELECT throws_ok($$SELECT tickq.forget_kind('nope')$$, 'TQ003', NULL,
    'an unknown kind is unknown');
SELECT is(tickq.forget_kind('a1'), 1::bigint, 'a retired kind is forgotten with its run');
SELECT results_eq($$SELECT (SELECT count(*) FROM tickq.job_kind WHERE name = 'a1')
        + (SELECT count(*) FROM tickq.job_run WHERE kind = 'a1')
        + (SELECT count(*) FROM tickq.drift WHERE kind = 'a1')$$,
    $$VALUES (0::bigint)$$, 'nothing of it is left');

SELECT * FROM finish();
ROLLBACK;
