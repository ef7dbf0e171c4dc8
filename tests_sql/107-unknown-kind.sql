-- The reads that name one kind (tickq history, tickq explain) find it in the queue, retired or
-- not, and refuse a name the queue never had with the same words (TQ003).
BEGIN;
SELECT plan(4);

SELECT throws_ok($$SELECT * FROM tickq.kind_history('nope')$$, 'TQ003', 'no kind "nope" in the queue',
    'history of an unknown kind names it');
SELECT throws_ok($$SELECT tickq.explain_kind('nope')$$, 'TQ003', 'no kind "nope" in the queue',
    'explain of an unknown kind names it, in the same words');

-- A kind the registry dropped stays in the queue, retired.
SELECT * FROM tickq.sync_registry('{"settings": {}, "kinds": {"gone": {"command": ["true"], "every": 300,
    "timeout": 60}}}', '2026-06-01 10:00Z');
SELECT * FROM tickq.sync_registry('{"settings": {}, "kinds": {}}', '2026-06-01 10:01Z');
SELECT is_empty($$SELECT * FROM tickq.kind_history('gone', 20, '2026-06-01 10:02Z')$$,
    'history of a retired kind is read (it never ran)');
SELECT is(tickq.explain_kind('gone', '2026-06-01 10:02Z') ->> 'state', 'retired',
    'explain of a retired kind says so');

SELECT * FROM finish();
ROLLBACK;
