-- A chain's value rules have one owner, the database (the file's reader only sums the steps'
-- timeouts for a chain that gives none): its timeout covers its steps', its step names do not
-- repeat. tickq.registry_problems names both at once, and every repeated name, in the words
-- the sync refuses with.
BEGIN;
SELECT plan(4);

SELECT results_eq($$SELECT p.kind, p.key, p.problem FROM tickq.registry_problems('{"settings": {},
    "kinds": {"core": {"every": 3600, "timeout": 1740, "steps": [
        {"name": "pull", "command": ["x"], "timeout": 1500}, {"name": "pull", "command": ["x"], "timeout": 180},
        {"name": "load", "command": ["x"], "timeout": 60}, {"name": "load", "command": ["x"], "timeout": 120}]}}}') AS p$$,
    $$VALUES ('core', 'steps', 'step names "load", "pull" are used twice'),
        ('core', 'timeout', 'a chain''s timeout must not be shorter than the sum of its steps'' (31m), got 29m')$$,
    'repeated names and a short timeout: both problems, every repeated name');
SELECT throws_ok($$SELECT tickq.sync_registry('{"kinds": {"core": {"every": 3600, "timeout": 1740, "steps": [
        {"name": "pull", "command": ["x"], "timeout": 1500}, {"name": "push", "command": ["x"], "timeout": 360}]}}}')$$,
    'TQ002', 'registry: kind "core", key "timeout": a chain''s timeout must not be shorter than the sum of its '
    'steps'' (31m), got 29m', 'the sync refuses a short timeout in the same words, durations as the file writes them');
SELECT is_empty($$SELECT * FROM tickq.registry_problems('{"kinds": {"core": {"every": 3600, "steps": [
        {"name": "pull", "command": ["x"], "timeout": 1500}, {"name": "push", "command": ["x"], "timeout": 360}]}}}')$$,
    'a chain without a timeout takes its steps'' sum: no problem');
SELECT is_empty($$SELECT * FROM tickq.registry_problems('{"kinds": {"core": {"every": 3600, "timeout": 1860, "steps": [
        {"name": "pull", "command": ["x"], "timeout": 1500}, {"name": "push", "command": ["x"], "timeout": 360}]}}}')$$,
    'a timeout equal to the sum is enough');

SELECT * FROM finish();
ROLLBACK;
