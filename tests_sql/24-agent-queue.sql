-- Agent kinds in the queue: a registry sync leaves them alone, they are claimed under the slot
-- limit beside registry kinds, capacity and the simulator count them, the registry's caps move
-- them, transcripts go only to a live run, and a 07:30 America/Chicago agent follows the clock.
BEGIN;
SELECT plan(18);

-- first sync
SELECT * FROM tickq.sync_registry('{
    "settings": {"slots": 2},
    "kinds": {"email": {"command": ["bin/send"], "every": 300, "timeout": 60, "priority": "urgent"}},
    "agents": {"priority": "high", "tools": ["search_crm"]}}', '2026-01-05 12:00Z');
-- agent a1
SELECT tickq.save_agent('a1', '{"prompt": "one", "every": 3600, "timeout": 120}', true,
    '2026-01-05 12:00Z');
-- agent a2
SELECT tickq.save_agent('a2', '{"prompt": "two", "every": 3600, "timeout": 180}', true,
    '2026-01-05 12:00Z');

-- A sync of a registry without them neither retires agent kinds nor reports them.
SELECT is_empty($$SELECT * FROM tickq.sync_registry('{
    "settings": {"slots": 2},
    "kinds": {"email": {"command": ["bin/send"], "every": 300, "timeout": 60, "priority": "urgent"}},
    "agents": {"priority": "high", "tools": ["search_crm"]}}', '2026-01-05 12:00:10Z')$$,
    'no drift about agent kinds');
SELECT results_eq($$SELECT name, enabled, retired_at FROM tickq.job_kind WHERE name LIKE 'agent.%' ORDER BY name$$,
    $$VALUES ('agent.a1', true, NULL::timestamptz), ('agent.a2', true, NULL)$$, 'agent kinds are not retired');
SELECT throws_ok($$SELECT * FROM tickq.sync_registry('{"settings": {"slots": 2},
    "kinds": {"agent.a1": {"command": ["sh", "-c", "id"], "every": 300, "timeout": 60}}}', '2026-01-05 12:00:20Z')$$,
    'TQ002', 'registry: kind "agent.a1", key "name": names starting with "agent." belong to user-built agents '
    '(tickq agent add)', 'a registry kind cannot take an agent''s name space');
SELECT is((SELECT enabled FROM tickq.job_kind WHERE name = 'agent.a1'), true, 'the refused sync changed nothing');

-- Claims: agents and registry kinds share the two slots, in lane order.
SELECT results_eq($$SELECT kind FROM tickq.claim_jobs(5, 'd1', '2026-01-05 12:01Z')$$,
    $$VALUES ('email'), ('agent.a1')$$, 'two slots: the urgent kind, then the high-lane agents');
SELECT is_empty($$SELECT * FROM tickq.claim_jobs(5, 'd2', '2026-01-05 12:01:01Z')$$,
    'no third claim while both slots are held');
SELECT throws_ok($$SELECT * FROM tickq.claim_manual('agent.a2', 'd2', NULL, '2026-01-05 12:01:02Z')$$, 'TQ005',
    NULL, 'a manual agent run is counted against the slots too');

-- Transcripts go to the live run of the agent only, bounded.
SELECT lives_ok($$SELECT tickq.record_agent_turn((SELECT run_id FROM tickq.job_kind WHERE name = 'agent.a1'),
    (SELECT id FROM tickq.agent WHERE name = 'a1'), 1, '{"answer": "hello"}', '2026-01-05 12:01:03Z')$$,
    'a turn of the live run is recorded');
SELECT throws_ok($$SELECT tickq.record_agent_turn((SELECT run_id FROM tickq.job_kind WHERE name = 'email'),
    (SELECT id FROM tickq.agent WHERE name = 'a1'), 2, '{}')$$, 'TQ044', NULL,
    'a transcript for another kind''s run is refused');
SELECT throws_ok($$SELECT tickq.record_agent_turn((SELECT run_id FROM tickq.job_kind WHERE name = 'agent.a1'),
    (SELECT id FROM tickq.agent WHERE name = 'a1'), 2, jsonb_build_object('answer', repeat('x', 40000)))$$,
    '23514', NULL, 'a turn over 32 KiB is refused');
SELECT throws_ok($$SELECT tickq.record_agent_turn((SELECT run_id FROM tickq.job_kind WHERE name = 'agent.a1'),
    (SELECT id FROM tickq.agent WHERE name = 'a1'), 7, '{}')$$, '23514', NULL, 'there is no seventh turn');

-- the agent run is reported like any run
SELECT * FROM tickq.report_run((SELECT run_id FROM tickq.job_kind WHERE name = 'agent.a1'), 'd1',
    'failed', 1, 'turn limit', NULL, '2026-01-05 12:02Z');
SELECT results_eq($$SELECT kind FROM tickq.claim_jobs(5, 'd1', '2026-01-05 12:02:01Z')$$,
    $$VALUES ('agent.a2')$$, 'the freed slot goes to the next agent');
SELECT is((SELECT count(*)::integer FROM tickq.agent_runs('a1')), 1, 'the agent''s history has its run');

-- Capacity and the simulator count agent kinds.
SELECT ok(EXISTS (SELECT FROM tickq.capacity_at('2026-01-05 12:03Z') WHERE kind = 'agent.a2'),
    'capacity counts the agent kinds');
SELECT ok((SELECT runs > 0 FROM tickq.simulate(3, NULL, '2026-01-05 12:03Z') WHERE kind = 'agent.a1'),
    'the simulator runs the agent kinds');

-- Lowering the registry's caps moves every agent's kind and limits.
-- caps lowered
SELECT * FROM tickq.sync_registry('{"settings": {"slots": 2},
    "kinds": {"email": {"command": ["bin/send"], "every": 300, "timeout": 60, "priority": "urgent"}},
    "agents": {"priority": "low", "timeout": 150, "max_turns": 3}}', '2026-01-06 00:00Z');
SELECT results_eq($$SELECT name, priority, timeout FROM tickq.job_kind WHERE name LIKE 'agent.%' ORDER BY name$$,
    $$VALUES ('agent.a1', 'low'::tickq.priority, '2 minutes'::interval),
        ('agent.a2', 'low', '2 minutes 30 seconds')$$, 'agent kinds take the new lane and the capped watchdog');
SELECT is((SELECT max_turns FROM tickq.load_agent((SELECT id FROM tickq.agent WHERE name = 'a1'))), 3,
    'the runner gets the capped turns');

-- 07:30 in Chicago: 13:30 UTC in winter, 12:30 UTC in summer, once on each change day.
-- a daily 07:30 America/Chicago agent
SELECT tickq.save_agent('brief', '{"prompt": "p", "at": "07:30", "timezone": "America/Chicago"}',
    true, '2026-03-06 00:00Z');
SELECT results_eq($$SELECT run_at, local_time FROM tickq.agent_next_runs('brief', 6, '2026-03-07 00:00Z')
    UNION ALL SELECT run_at, local_time FROM tickq.agent_next_runs('brief', 3, '2026-10-31 00:00Z')$$,
    $$VALUES ('2026-03-07 13:30Z'::timestamptz, '2026-03-07 07:30'::timestamp),
        ('2026-03-08 12:30Z', '2026-03-08 07:30'), ('2026-03-09 12:30Z', '2026-03-09 07:30'),
        ('2026-03-10 12:30Z', '2026-03-10 07:30'), ('2026-03-11 12:30Z', '2026-03-11 07:30'),
        ('2026-03-12 12:30Z', '2026-03-12 07:30'),
        ('2026-10-31 12:30Z', '2026-10-31 07:30'), ('2026-11-01 13:30Z', '2026-11-01 07:30'),
        ('2026-11-02 13:30Z', '2026-11-02 07:30')$$,
    'winter 13:30 UTC, summer 12:30 UTC, one run on 8 March and on 1 November');

SELECT * FROM finish();
ROLLBACK;
