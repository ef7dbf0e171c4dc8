-- An unknown kind is refused in one wording (tickq.unknown_kind_error): TQ003 naming the kind,
-- "in the registry" where a live kind is wanted (a retired one is none), "in the queue" where
-- any kind the queue holds will do, by every function that takes a kind's name.
BEGIN;
SELECT plan(10);

SELECT tickq.sync_registry('{"settings": {"timezone": "UTC"}, "kinds": {
    "old": {"command": ["x"], "every": 300, "timeout": 60}}}', '2026-06-01 00:00Z');
SELECT tickq.sync_registry('{"settings": {"timezone": "UTC"}, "kinds": {}}', '2026-06-01 00:01Z');

SELECT throws_ok($$SELECT tickq.unknown_kind_error('k', true)$$, 'TQ003', 'no kind "k" in the registry',
    'a live kind wanted: the registry');
SELECT throws_ok($$SELECT tickq.unknown_kind_error('k', false)$$, 'TQ003', 'no kind "k" in the queue',
    'any kind will do: the queue');
SELECT throws_like($$SELECT tickq.unknown_kind_error('k', true, 'see there.')$$, '%in the registry%',
    'the hint is the caller''s');
SELECT throws_ok($$SELECT tickq.pause_kind('old', p_now => '2026-06-01 00:02Z')$$, 'TQ003',
    'no kind "old" in the registry', 'pause: a retired kind is not in the registry');
SELECT throws_ok($$SELECT tickq.resume_kind('nope', '2026-06-01 00:02Z')$$, 'TQ003',
    'no kind "nope" in the registry', 'resume: likewise');
SELECT throws_ok($$SELECT * FROM tickq.claim_manual('old', 'd', NULL, '2026-06-01 00:02Z')$$, 'TQ003',
    'no kind "old" in the registry', 'a manual run of a retired kind: likewise');
SELECT throws_ok($$SELECT * FROM tickq.kind_history('nope', 5, '2026-06-01 00:02Z')$$, 'TQ003',
    'no kind "nope" in the queue', 'history: any kind of the queue, and this one is none');
SELECT is_empty($$SELECT * FROM tickq.kind_history('old', 5, '2026-06-01 00:02Z')$$,
    'history of a retired kind: the queue still holds it');
SELECT throws_ok($$SELECT * FROM tickq.forget_kind('nope')$$, 'TQ003',
    'no kind "nope" in the queue', 'forget: likewise');

SELECT throws_ok($$SELECT tickq.explain_kind('nope', '2026-06-01 00:02Z')$$, 'TQ003',
    'no kind "nope" in the queue', 'explain: likewise');

SELECT * FROM finish();
ROLLBACK;
