-- A registry that says nothing about agents (no "agents" key): its sync leaves the agents' caps
-- as the last registry with an [agents] section set them, and its dispatcher claims no agent
-- run, which it could not run; a dispatcher whose registry has [agents] still does.
BEGIN;
SELECT plan(11);

-- a registry with an [agents] section syncs
SELECT * FROM tickq.sync_registry('{
    "dispatcher": "h1:1",
    "settings": {"slots": 4},
    "kinds": {"email": {"command": ["bin/send"], "every": 300, "timeout": 60}},
    "agents": {"priority": "high", "max_turns": 3, "timeout": 120, "retries": 1,
               "tools": ["search_crm", "weather"]}}', '2026-01-05 12:00Z');
-- an agent is saved
SELECT tickq.save_agent('brief', '{"prompt": "Summarise.", "every": 3600, "timeout": 100}',
    true, '2026-01-05 12:00Z');
-- Due now (its trigger schedules it from the wall clock).
UPDATE tickq.job_kind SET due_at = '2026-01-05 12:00Z' WHERE name = 'agent.brief';

SELECT lives_ok($$SELECT * FROM tickq.sync_registry('{
    "dispatcher": "h2:2",
    "settings": {"slots": 4},
    "kinds": {"email": {"command": ["bin/send"], "every": 300, "timeout": 60}}}', '2026-01-05 12:01Z')$$,
    'a registry without an [agents] section syncs');
SELECT results_eq($$SELECT priority, max_turns, max_timeout, retries, tools FROM tickq.agent_settings$$,
    $$VALUES ('high'::tickq.priority, 3, '2 minutes'::interval, 1, '{search_crm,weather}'::text[])$$,
    'the agents'' caps are the last [agents] section''s, not the defaults');
SELECT results_eq($$SELECT priority, timeout, retries FROM tickq.job_kind WHERE name = 'agent.brief'$$,
    $$VALUES ('high'::tickq.priority, '100 seconds'::interval, 1)$$,
    'the agent''s kind keeps its lane, watchdog and retries');
SELECT results_eq($$SELECT name, agents FROM tickq.dispatcher ORDER BY name$$,
    $$VALUES ('h1:1', true), ('h2:2', false)$$,
    'each dispatcher''s record says whether its registry can run agents');

-- The agent is due: the dispatcher without [agents] claims the kind it can run and leaves the
-- agent's run alone; the one with [agents] claims it.
SELECT results_eq($$SELECT kind FROM tickq.claim_jobs(4, 'h2:2', '2026-01-05 12:02Z')$$,
    $$VALUES ('email'), ('tickq.housekeeping')$$,
    'a dispatcher whose registry has no [agents] claims every due kind but the agent');
SELECT results_eq($$SELECT count(*) FROM tickq.job_run WHERE kind = 'agent.brief'$$,
    $$VALUES (0::bigint)$$, 'no run of the agent was opened, so none can fail');
-- The next tick of that host syncs the same registry: nothing to do, so nothing written, not
-- even its dispatcher's row; the queue's record of the registry it is synced with answers.
-- the same registry syncs again under another dispatcher name
SELECT * FROM tickq.sync_registry('{
    "dispatcher": "h2:3",
    "settings": {"slots": 4},
    "kinds": {"email": {"command": ["bin/send"], "every": 300, "timeout": 60}}}', '2026-01-05 12:01:30Z');
SELECT is_empty($$SELECT FROM tickq.dispatcher WHERE name = 'h2:3'$$, 'that sync wrote no dispatcher row');
SELECT is_empty($$SELECT * FROM tickq.claim_jobs(4, 'h2:3', '2026-01-05 12:01:40Z')$$,
    'its claim leaves the agent too');
SELECT results_eq($$SELECT kind FROM tickq.claim_jobs(4, 'h1:1', '2026-01-05 12:02Z')$$,
    $$VALUES ('agent.brief')$$, 'the dispatcher whose registry has [agents] claims the agent''s run');
SELECT results_eq($$SELECT dispatcher FROM tickq.job_run WHERE kind = 'agent.brief'$$,
    $$VALUES ('h1:1')$$, 'its one run is that dispatcher''s');

-- Once the one without [agents] syncs one with it, it claims agents too.
-- the second dispatcher syncs a registry with [agents]
SELECT * FROM tickq.sync_registry('{
    "dispatcher": "h2:2",
    "settings": {"slots": 4},
    "kinds": {"email": {"command": ["bin/send"], "every": 300, "timeout": 60}},
    "agents": {"priority": "high", "max_turns": 3, "timeout": 120, "retries": 1,
               "tools": ["search_crm", "weather"]}}', '2026-01-05 12:03Z');
SELECT results_eq($$SELECT agents FROM tickq.dispatcher WHERE name = 'h2:2'$$, $$VALUES (true)$$,
    'its record says so');

SELECT * FROM finish();
ROLLBACK;
