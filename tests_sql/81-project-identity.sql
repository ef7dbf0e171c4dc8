-- A project's identity survives a deploy: behind a `current` link every release is one file (the
-- path as given), two checkouts at other paths or on other hosts are one project when their
-- registries give it one name (settings.project), and a queue recorded before the path as given
-- (its path resolved) is still its project's. Another project is still refused.
BEGIN;
SELECT plan(11);

CREATE FUNCTION pg_temp.sync(p_source text, p_kinds text, p_project text, p_at timestamptz)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    PERFORM tickq.sync_registry(jsonb_build_object('source', p_source::jsonb,
        'settings', CASE WHEN p_project IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('project', p_project) END,
        'kinds', (SELECT jsonb_object_agg(k, '{"command": ["x"], "every": 3600, "timeout": 60}'::jsonb)
            FROM unnest(string_to_array(p_kinds, ',')) AS k)), p_at);
END $$;

-- release r1 through the current link
SELECT pg_temp.sync('{"path": "/srv/app/current/registry.toml",
    "resolved": "/srv/app/releases/r1/registry.toml", "host": "h1"}', 'a,b', NULL, '2026-03-28 00:00Z');
SELECT lives_ok($$SELECT pg_temp.sync('{"path": "/srv/app/current/registry.toml",
    "resolved": "/srv/app/releases/r2/registry.toml", "host": "h1"}', 'a', NULL, '2026-03-28 00:01Z')$$,
    'release r2, which removes a kind, is the same project: its path as given did not change');
SELECT results_eq($$SELECT path, resolved, project FROM tickq.queue_registry$$,
    $$VALUES ('/srv/app/current/registry.toml', '/srv/app/releases/r2/registry.toml', NULL::text)$$,
    'the queue records both paths');
SELECT throws_like($$SELECT pg_temp.sync('{"path": "/home/ops/app/registry.toml",
    "resolved": "/home/ops/app/registry.toml", "host": "h2"}', 'c', NULL, '2026-03-28 00:02Z')$$,
    '%if both are one project%project = "NAME" in [settings]%--replace-queue%',
    'a checkout at another path with no name is another project, and the refusal says how to name it');

-- One name in both: two hosts, two paths, one project.
-- the project gets a name (same file: the same project)
SELECT pg_temp.sync('{"path": "/srv/app/current/registry.toml",
    "resolved": "/srv/app/releases/r2/registry.toml", "host": "h1"}', 'a', 'billing', '2026-03-28 00:03Z');
SELECT lives_ok($$SELECT pg_temp.sync('{"path": "/home/ops/checkout/registry.toml",
    "resolved": "/home/ops/checkout/registry.toml", "host": "h2"}', 'c', 'billing', '2026-03-28 00:04Z')$$,
    'another host at another path, the same name: it may retire the kinds it removed');
SELECT results_eq($$SELECT path, host, project FROM tickq.queue_registry$$,
    $$VALUES ('/home/ops/checkout/registry.toml', 'h2', 'billing')$$, 'and is the registry of record');
SELECT throws_like($$SELECT pg_temp.sync('{"path": "/srv/crm/registry.toml",
    "resolved": "/srv/crm/registry.toml", "host": "h1"}', 'z', 'crm', '2026-03-28 00:05Z')$$,
    '%/home/ops/checkout/registry.toml (project billing) on host h2%/srv/crm/registry.toml (project crm)%',
    'another name at another path is another project');

-- Another project's registry with a bad value: both problems in one answer, the file's own first.
SELECT results_eq($$SELECT key, left(problem, 40) FROM tickq.registry_problems('{
    "source": {"path": "/srv/crm/registry.toml", "host": "h1"},
    "kinds": {"z": {"command": ["x"], "every": 0, "timeout": 60}}}')$$,
    $$VALUES ('every', 'must be a duration from 1s to 366d, got '),
        (NULL, 'this queue was last synced by registry /')$$,
    'registry_problems lists the file''s own problems, then the queue''s refusal');

-- A queue recorded before: its path was the file with links followed.
UPDATE tickq.queue_registry SET path = '/srv/old/releases/r7/registry.toml', resolved = NULL, project = NULL;
SELECT ok(tickq.same_project((SELECT q FROM tickq.queue_registry AS q),
    '{"path": "/srv/old/current/registry.toml", "resolved": "/srv/old/releases/r7/registry.toml"}'),
    'a record of the resolved path is the project of the same file reached through its link');
SELECT results_eq($$SELECT path, this_project FROM tickq.queue_registry_at(
    '{"path": "/srv/crm/registry.toml", "resolved": "/srv/crm/registry.toml", "project": "crm"}')$$,
    $$VALUES ('/srv/old/releases/r7/registry.toml', false)$$,
    'status asks whose queue it is: another project''s');

-- The name is a value of the registry: judged by the database, bounded by registry_limits.
SELECT results_eq($$SELECT key, problem FROM tickq.registry_problems('{"settings": {"project": "Billing App"},
    "kinds": {}}')$$,
    $$VALUES ('project', 'a project name is 1-63 characters of a-z, 0-9, _ . - starting with a letter '
        || 'or digit, got "Billing App"')$$,
    'a name that is no name is refused, naming the key and the rule');
SELECT is_empty($$SELECT FROM tickq.registry_problems(jsonb_build_object('settings',
    jsonb_build_object('project', repeat('b', 63)), 'kinds', '{}'::jsonb))$$, 'a name of 63 characters is taken');

SELECT * FROM finish();
ROLLBACK;
