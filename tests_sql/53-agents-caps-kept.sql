-- A registry that says nothing about agents (no "agents" object) leaves the agents' caps as
-- the last registry that had an [agents] section set them: a second dispatcher's registry
-- without the section must not reset them to the defaults.
BEGIN;
SELECT plan(1);

-- a registry with an agents section synced
SELECT * FROM tickq.sync_registry('{
    "settings": {"slots": 2, "tick": 300, "stale_after": 900},
    "kinds": {"every5": {"command": ["x"], "every": 300, "timeout": 60}},
    "agents": {"max_turns": 3, "timeout": 120, "tools": ["search"]}}', '2026-03-28 00:00Z');
-- a registry without one synced
SELECT * FROM tickq.sync_registry('{
    "settings": {"slots": 2, "tick": 300, "stale_after": 900},
    "kinds": {"every5": {"command": ["x"], "every": 300, "timeout": 60}}}', '2026-03-28 00:05Z');
SELECT results_eq(
    $$SELECT max_turns, max_timeout, tools FROM tickq.agent_settings$$,
    $$VALUES (3, '2 minutes'::interval, '{search}'::text[])$$,
    'the caps are the ones the agents section set');

SELECT * FROM finish();
ROLLBACK;
