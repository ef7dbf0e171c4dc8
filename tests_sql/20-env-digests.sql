-- env values reach the mirror and the drift log only as digests, on the JSON path too.
BEGIN;
SELECT plan(4);

SELECT is(
    tickq.env_digests('k', '{"TOKEN": "hunter2"}'),
    jsonb_build_object('TOKEN', 'sha256:' || encode(sha256(convert_to('k:TOKEN=hunter2', 'UTF8')), 'hex')),
    'a value becomes the digest of kind:NAME=value');
SELECT is(
    tickq.env_digests('k', tickq.env_digests('k', '{"TOKEN": "hunter2"}')),
    tickq.env_digests('k', '{"TOKEN": "hunter2"}'),
    'a digest stays as it is (registry.py sends digests)');
SELECT isnt(
    tickq.env_digests('a', '{"TOKEN": "same"}') -> 'TOKEN',
    tickq.env_digests('b', '{"TOKEN": "same"}') -> 'TOKEN',
    'equal values of two kinds do not look equal');

-- synced with an env value
SELECT * FROM tickq.sync_registry('{"kinds": {"k": {"command": ["x"], "every": 60,
    "timeout": 30, "env": {"TOKEN": "first-secret"}}}}', '2026-06-01 10:00Z');
-- and with a changed one
SELECT * FROM tickq.sync_registry('{"kinds": {"k": {"command": ["x"], "every": 60,
    "timeout": 30, "env": {"TOKEN": "second-secret"}}}}', '2026-06-01 10:01Z');
SELECT is(
    (SELECT count(*)::integer FROM tickq.job_kind AS k WHERE k.registry::text ~ 'first-secret|second-secret')
    + (SELECT count(*)::integer FROM tickq.drift AS d
        WHERE coalesce(d.stored_value::text, '') || coalesce(d.registry_value::text, '')
            ~ 'first-secret|second-secret'),
    0, 'neither value is in the mirror or the drift log');

SELECT * FROM finish();
ROLLBACK;
