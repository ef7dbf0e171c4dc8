-- Every value problem of every kind at once (issue 20, item 12): tickq.registry_problems lists
-- each refused key of a kind, in the words tickq.sync_registry refuses it with, so a file with
-- three typos in one kind is fixed in one round.
BEGIN;
SELECT plan(8);

SELECT results_eq($$SELECT p.kind, p.key, p.problem FROM tickq.registry_problems('{"settings": {},
    "kinds": {"a": {"command": ["true"], "every": 300, "timeout": 0, "retries": -1,
        "priority": "urgentt"}}}') AS p ORDER BY 2$$,
    $$VALUES ('a', 'priority', 'must be one of urgent, high, normal, low, got "urgentt"'),
        ('a', 'retries', 'must be a whole number from 0 to 100, got -1'),
        ('a', 'timeout', 'must be a duration from 1s to 7d, got 0s')$$,
    'three bad values of one kind are three rows');

SELECT throws_ok($$SELECT tickq.sync_registry('{"settings": {}, "kinds": {"a": {"command": ["true"],
    "every": 300, "timeout": 0, "retries": -1, "priority": "urgentt"}}}')$$,
    'TQ002', 'registry: kind "a", key "timeout": must be a duration from 1s to 7d, got 0s',
    'the sync still refuses with the first of them, in the same words');

SELECT results_eq($$SELECT p.kind, p.key FROM tickq.registry_problems('{"settings": {}, "kinds": {
    "a": {"command": ["true"], "every": 0, "timeout": 0},
    "b": {"command": ["true"], "every": 300, "timeout": 30, "enabled": "yes", "retries": 101}}}') AS p
    ORDER BY 1, 2$$,
    $$VALUES ('a', 'every'), ('a', 'timeout'), ('b', 'enabled'), ('b', 'retries')$$,
    'every problem of every kind');

SELECT results_eq($$SELECT p.key, p.problem FROM tickq.registry_problems('{"settings": {}, "kinds": {
    "u": {"command": ["true"], "evry": 300, "every": 0, "offset": 30, "timeout": 30}}}') AS p ORDER BY 1$$,
    $$VALUES ('every', 'must be a duration from 1s to 366d, got 0s'), ('evry', 'unknown key')$$,
    'an unknown key and a bad value together; the offset is not blamed for a bad every');

SELECT results_eq($$SELECT p.key FROM tickq.registry_problems('{"settings": {}, "kinds": {
    "t": {"command": [], "at": "25:00", "on": ["mo"], "timezone": "EST", "timeout": 30,
        "irreversible": 1}}}') AS p ORDER BY 1$$,
    $$VALUES ('at'), ('command'), ('irreversible'), ('on'), ('timezone')$$,
    'a calendar kind: command, at, on, timezone and irreversible each named');

SELECT results_eq($$SELECT p.key FROM tickq.registry_problems('{"settings": {}, "kinds": {
    "c": {"steps": [{"name": "x", "command": ["true"], "timeout": 0},
        {"name": "y", "command": [], "timeout": 30, "cwdd": "x"}], "every": 300,
        "priority": "hi"}}}') AS p ORDER BY 1$$,
    $$VALUES ('priority'), ('steps[1].timeout'), ('steps[2].command'), ('steps[2].cwdd')$$,
    'a chain: each bad key of each step and the kind''s own');

SELECT results_eq($$SELECT p.key, p.problem FROM tickq.registry_problems('{"settings": {}, "kinds": {
    "b": {"command": ["true"], "every": 300, "at": "07:00", "timeout": 0}}}') AS p ORDER BY 1$$,
    $$VALUES ('every', 'give exactly one of "every" or "at"'),
        ('timeout', 'must be a duration from 1s to 7d, got 0s')$$,
    'a schedule that is judged no further still lets the other keys be judged');

SELECT is_empty($$SELECT FROM tickq.registry_problems('{"settings": {}, "kinds": {
    "g": {"command": ["true"], "every": 300, "timeout": 30},
    "h": {"steps": [{"name": "x", "command": ["true"], "timeout": 30}], "at": "07:00"}}}')$$,
    'a good registry has no problem');

SELECT * FROM finish();
ROLLBACK;
